// The response examples an integrator reads most, written by hand: one file per resource in
// openapi-examples/, all about the example org of openapi-examples/example-org.ts.
// openapi-document.ts puts each on its operation's success response, where
// test/node/openapi-contract.test.ts validates it against the schema. Operations not listed
// get one built from their schema by openapi-sampler.

import { agentExamples } from "./openapi-examples/agents";
import { apiKeyExamples } from "./openapi-examples/api-keys";
import { assessmentExamples } from "./openapi-examples/assessments";
import { auditExamples } from "./openapi-examples/audit";
import { billingExamples } from "./openapi-examples/billing";
import type { OperationExamples } from "./openapi-examples/example-org";
import { historyExamples } from "./openapi-examples/history";
import { mandateBudgetExamples } from "./openapi-examples/mandate-budgets";
import { networkExamples } from "./openapi-examples/network";
import { orgExamples } from "./openapi-examples/orgs";
import { policyExamples } from "./openapi-examples/policies";
import { railExamples } from "./openapi-examples/rails";
import { reviewExamples } from "./openapi-examples/reviews";
import { webhookEndpointExamples } from "./openapi-examples/webhook-endpoints";

/** The examples, by operation (`METHOD /path`): each the body of its success response. */
export const RESPONSE_EXAMPLES: OperationExamples = {
  ...orgExamples,
  ...apiKeyExamples,
  ...assessmentExamples,
  ...reviewExamples,
  ...mandateBudgetExamples,
  ...historyExamples,
  ...policyExamples,
  ...agentExamples,
  ...webhookEndpointExamples,
  ...auditExamples,
  ...billingExamples,
  ...networkExamples,
  ...railExamples,
};
