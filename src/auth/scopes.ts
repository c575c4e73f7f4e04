import { z } from "@hono/zod-openapi";

/** The spec's scope table. `keys:*` belong to sessions only. */
export const SCOPES = [
  "assess:write",
  "assess:read",
  "agents:read",
  "agents:write",
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
] as const;

export type Scope = (typeof SCOPES)[number];

export const SESSION_ONLY_SCOPES: readonly Scope[] = ["keys:read", "keys:write"];

export const scopeSchema = z.enum(SCOPES).openapi("Scope");

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** The owner has every scope on session routes; an admin manages keys; a member reads its context. */
export function scopesOfRole(role: Role): Scope[] {
  switch (role) {
    case "owner":
      return [...SCOPES];
    case "admin":
      return [...SESSION_ONLY_SCOPES];
    case "member":
      return [];
  }
}

/** The roles whose sessions carry a scope, so the database can gate on the role alone. */
export function rolesWithScope(scope: Scope): Role[] {
  return ROLES.filter((role) => scopesOfRole(role).includes(scope));
}
