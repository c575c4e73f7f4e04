import { z } from "@hono/zod-openapi";

// Inline in each record, not a named component: a component the nullable members refer to
// would read as nullable itself where a token's claim must carry it.

/**
 * Where a revocable thing the service issued is published (draft-ietf-oauth-status-list §6.2,
 * `status.status_list`): the index in the list `uri` names (docs/status-lists.md, "Issued").
 */
export const StatusListReference = z.object({
  idx: z.int().min(0),
  uri: z.string().openapi({ description: "`GET /v1/status-lists/{id}` of this service" }),
});

/** A record's `status_list` member: null on records made before places existed. */
export const StatusListMember = StatusListReference.nullable().openapi({
  description:
    "Where this thing's status is published (draft-ietf-oauth-status-list §6.2): VALID (0), " +
    "INVALID (1, final: revoked, or a grant redeemed) or SUSPENDED (2: its agent is suspended), " +
    "in the list within its `ttl` of the change. Null on records made before the service " +
    "published places (docs/status-lists.md)",
});
