import type { components } from "@agent-risk/client";
import { api } from "../api";

type Policy = components["schemas"]["Policy"];

/**
 * The policy a rollback re-activates: the draft with the highest `version`. Versions come from
 * one org-wide counter, taken at each activation (docs/shadow-policies.md), so the highest
 * version among the drafts is the policy that was active just before the current one — even
 * when the current one is itself a rollback. A draft never activated has no version and is
 * never a rollback target. Reads every draft page (an org holds few policies).
 */
export async function previousActive(): Promise<Policy | null> {
  let best: Policy | null = null;
  let cursor: string | undefined;
  for (;;) {
    const { data } = await api.GET("/v1/policies", {
      params: { query: { status: "draft", limit: 100, ...(cursor ? { cursor } : {}) } },
    });
    for (const policy of data.data) {
      if (policy.version !== null && (best === null || policy.version > (best.version ?? 0))) {
        best = policy;
      }
    }
    if (!data.has_more || !data.next_cursor) return best;
    cursor = data.next_cursor;
  }
}
