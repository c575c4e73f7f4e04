// The shopping agent: its record, its key, its trust history and its Agent Card's status.

import {
  AGENT,
  AGENT_KEY,
  hashes,
  list,
  type OperationExamples,
  PRINCIPAL,
  statusList,
} from "./example-org";

const agent = {
  object: "agent",
  id: AGENT,
  principal_id: PRINCIPAL,
  name: "Acme Shopping Assistant",
  description: "Buys household supplies for the principal within the mandate's budget",
  metadata: { team: "checkout", environment: "production" },
  status: "active",
  trust_score: 82,
  risk_tier: "low",
  evidence: {
    card_status: "verified",
    active_keys: 1,
    approvals: 148,
    reviews: 6,
    denials: 2,
    suspensions: 0,
    confirmed_frauds: 0,
    confirmed_legitimate: 11,
  },
  card: {
    digest: `sha256:${hashes.h}`,
    protocol_version: "0.3.0",
    name: "Acme Shopping Assistant",
    url: "https://agents.acme.example/a2a",
    verified_at: "2026-11-03T10:07:41.220Z",
  },
  created: "2026-11-03T10:04:52.871Z",
  updated: "2026-11-20T09:14:03.540Z",
  suspended_at: null,
  revoked_at: null,
  status_list: statusList(40_917),
};

const agentKey = {
  object: "agent_key",
  id: AGENT_KEY,
  agent_id: AGENT,
  kty: "EC",
  crv: "P-256",
  alg: "ES256",
  jwk: {
    kty: "EC",
    crv: "P-256",
    x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
  },
  status: "active",
  created: "2026-11-03T10:06:05.302Z",
  revoked_at: null,
  status_list: statusList(7_342),
};

const trustEvent = (
  id: string,
  reason: string,
  score: number,
  tier: string,
  previous: [number, string] | null,
  created: string,
) => ({
  object: "trust_event",
  id,
  agent_id: AGENT,
  reason,
  status: "active",
  trust_score: score,
  risk_tier: tier,
  previous_score: previous?.[0] ?? null,
  previous_tier: previous?.[1] ?? null,
  created,
});

const cardStatus = {
  object: "agent_card_status",
  agent_id: AGENT,
  status: "verified",
  reasons: [],
  protocol_version: "0.3.0",
  digest: `sha256:${hashes.h}`,
  name: "Acme Shopping Assistant",
  url: "https://agents.acme.example/a2a",
  source_url: "https://agents.acme.example/.well-known/agent-card.json",
  signatures: [
    {
      index: 0,
      kid: AGENT_KEY,
      alg: "ES256",
      status: "valid",
      message: "signed by the agent's active key",
      form: "spec",
      diagnosis: "signed_as_received",
    },
  ],
  checked_at: "2026-11-03T10:07:41.220Z",
  verified_at: "2026-11-03T10:07:41.220Z",
};

export const agentExamples: OperationExamples = {
  "GET /v1/agents": list([agent]),
  "GET /v1/agents/{id}": agent,
  "GET /v1/agents/{id}/keys": list([agentKey]),
  "GET /v1/agents/{id}/trust-history": list([
    trustEvent(
      "01a1f83b-fd94-7b7a-bcbf-7dc4f0b56fe9",
      "assessment",
      82,
      "low",
      [81, "low"],
      "2026-11-20T09:14:03.540Z",
    ),
    trustEvent(
      "01a1a0df-83f6-7196-b564-fe714bb85ce6",
      "key_registered",
      45,
      "high",
      [30, "high"],
      "2026-11-03T10:06:05.302Z",
    ),
    trustEvent(
      "01a1a0de-6907-7d24-aa71-0e3ca2d3851a",
      "registered",
      30,
      "high",
      null,
      "2026-11-03T10:04:52.871Z",
    ),
  ]),
  "GET /v1/agents/{id}/card-status": cardStatus,
};
