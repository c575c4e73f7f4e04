/**
 * The spec's scope table. `keys:*` belong to sessions only. Apart from scopes.ts (which
 * builds the OpenAPI `Scope` schema with zod), so that the console can import the names.
 */
export const SCOPES = [
  "assess:write",
  "assess:read",
  "agents:read",
  "agents:write",
  "issuers:read",
  "issuers:write",
  "audit:read",
  "policy:read",
  "policy:write",
  "webhooks:read",
  "webhooks:write",
  "gdpr:erase",
  "keys:read",
  "keys:write",
  "artifact:write",
  "session:write",
  "review:read",
  "review:write",
  "network:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * The scopes only a session holds: an API key never manages keys, nor decides whether the org
 * shares its fraud signals with other orgs (docs/network.md): that is a person's choice.
 */
export const SESSION_ONLY_SCOPES: readonly Scope[] = ["keys:read", "keys:write", "network:write"];

/**
 * The scopes a test key could hold but never use: every route that takes them is live-only
 * (`guarded(…, { liveOnly: true })`: it changes what both modes share, and a test key answers
 * 403 `live_key_required`). test/node/scope-guide.test.ts derives the set from the OpenAPI
 * document's `x-required-scope` and `x-live-only`, and fails when this list differs.
 */
export const LIVE_ONLY_SCOPES: readonly Scope[] = ["agents:write", "issuers:write", "gdpr:erase"];

/** The scopes a key of `mode` may be given: a test key is never offered one it cannot use. */
export function keyScopes(mode: "live" | "test"): Scope[] {
  return SCOPES.filter(
    (scope) =>
      !SESSION_ONLY_SCOPES.includes(scope) &&
      (mode === "live" || !LIVE_ONLY_SCOPES.includes(scope)),
  );
}

/**
 * What each scope lets a key do, in a line, for the key form. "Live only" parts: what a test
 * key with that scope is still refused (the routes that change what both modes share).
 */
export const SCOPE_GUIDE: Record<Scope, { does: string; liveOnly?: string }> = {
  "assess:write": {
    does: "Assess actions (POST /v1/assess), label outcomes, redeem grants, report effects, use test clocks",
    liveOnly: "action mandates and billing changes",
  },
  "assess:read": { does: "Read assessments, mandates, action decisions, the bill and test clocks" },
  "agents:read": { does: "Read principals, agents, their keys and trust history" },
  "agents:write": { does: "Register principals and agents, their keys and Agent Cards" },
  "issuers:read": { does: "Read the credential issuers trusted for AP2 credentials" },
  "issuers:write": { does: "Trust or revoke a credential issuer (a trust anchor)" },
  "audit:read": { does: "Read and verify the audit trail, artifacts, sessions, control coverage" },
  "policy:read": { does: "Read policies and risk models; backtest; evaluation sets and runs" },
  "policy:write": {
    does: "Train and switch risk models, import history; create and activate policies",
    liveOnly: "policies, their shadowing, evaluation sets and runs",
  },
  "webhooks:read": { does: "Read webhook endpoints and their deliveries" },
  "webhooks:write": { does: "Create, rotate and delete webhook endpoints (of the key's mode)" },
  "gdpr:erase": { does: "Erase a principal's personal data (cannot be undone)" },
  "keys:read": { does: "List API keys (sessions only)" },
  "keys:write": { does: "Create and revoke API keys (sessions only)" },
  "artifact:write": { does: "Register artifacts and record agent sessions" },
  "session:write": { does: "Record agent sessions and their events" },
  "review:read": { does: "Read the review queue and its settings" },
  "review:write": { does: "Resolve reviews (approve or deny)", liveOnly: "the review settings" },
  "network:write": { does: "Join or leave the network signals of a mode (sessions only)" },
};
