/**
 * Route pattern → page. One line per page, so the pages' authors each add their own; `:name`
 * matches one segment, handed to the page in order as `params`.
 */
import { AgentPage } from "./pages/agent";
import { AgentsPage } from "./pages/agents";
import { ApiKeysPage } from "./pages/api-keys";
import { AssessmentPage } from "./pages/assessment";
import { AssessmentsPage } from "./pages/assessments";
import { AuditPage } from "./pages/audit";
import { BillingPage } from "./pages/billing";
import { ModelPage } from "./pages/model";
import { ModelsPage } from "./pages/models";
import { NetworkPage } from "./pages/network";
import { OverviewPage } from "./pages/overview";
import { PoliciesPage } from "./pages/policies";
import { PolicyPage } from "./pages/policy";
import { RetroStudyPage } from "./pages/retro-study";
import { ReviewsPage } from "./pages/reviews";
import { WebhooksPage } from "./pages/webhooks";
import type { Page } from "./router";

export const routes: Record<string, Page> = {
  "": OverviewPage,
  assessments: AssessmentsPage,
  "assessments/:id": AssessmentPage,
  reviews: ReviewsPage,
  audit: AuditPage,
  policies: PoliciesPage,
  "policies/:id": PolicyPage,
  agents: AgentsPage,
  "agents/:id": AgentPage,
  webhooks: WebhooksPage,
  network: NetworkPage,
  "api-keys": ApiKeysPage,
  billing: BillingPage,
  models: ModelsPage,
  "models/:id": ModelPage,
  "retro-study": RetroStudyPage,
};
