import { z } from "@hono/zod-openapi";

import { SCOPES, type Scope, SESSION_ONLY_SCOPES } from "./scope-names";

export { SCOPES, type Scope, SESSION_ONLY_SCOPES };

/** What a route needs: one scope, or any one of several (the spec's "artifact:write or assess:write"). */
export type ScopeRequirement = Scope | readonly [Scope, ...Scope[]];

/** The scopes that satisfy a requirement, any one being enough. */
export function acceptedScopes(required: ScopeRequirement): readonly Scope[] {
  return typeof required === "string" ? [required] : required;
}

/** The 403's details: the scope to grant, and the alternatives when there are several. */
export function scopeDetails(required: ScopeRequirement) {
  const accepted = acceptedScopes(required);
  return accepted.length > 1
    ? { required: accepted[0], any_of: accepted }
    : { required: accepted[0] };
}

export const scopeSchema = z.enum(SCOPES).openapi("Scope");

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/**
 * The review queue's scopes: people decide reviews, so the sessions of owners and admins hold
 * them (an admin could mint a key with them anyway); keys may be given them too.
 */
const REVIEW_SCOPES: readonly Scope[] = ["review:read", "review:write"];

/**
 * The credential issuer registry's scopes. An issuer is a trust anchor: whoever registers one
 * decides whose signatures make a payment `mandate_verified`, so it is not part of
 * `agents:write` (a key that manages agents could otherwise trust a root it signed itself).
 * Sessions of owners and admins hold them; a key has them only when created with them.
 */
const ISSUER_SCOPES: readonly Scope[] = ["issuers:read", "issuers:write"];

/**
 * The owner has every scope on session routes; an admin manages keys and the org's network
 * membership, decides reviews and manages trust anchors; a member reads its context.
 */
export function scopesOfRole(role: Role): Scope[] {
  switch (role) {
    case "owner":
      return [...SCOPES];
    case "admin":
      return [...SESSION_ONLY_SCOPES, ...REVIEW_SCOPES, ...ISSUER_SCOPES];
    case "member":
      return [];
  }
}

/** The roles whose sessions carry a scope, so the database can gate on the role alone. */
export function rolesWithScope(required: ScopeRequirement): Role[] {
  const accepted = acceptedScopes(required);
  return ROLES.filter((role) => scopesOfRole(role).some((s) => accepted.includes(s)));
}
