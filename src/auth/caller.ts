import { sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { type Placeholders, preparedOnce } from "../db/prepared";
import { ApiError } from "../errors";
import type { Credential } from "./credential";
import {
  acceptedScopes,
  type Role,
  rolesWithScope,
  type Scope,
  type ScopeRequirement,
  scopeDetails,
  scopesOfRole,
} from "./scopes";
import { unauthenticated } from "./unauthenticated";

export type Actor =
  | { type: "api_key"; id: string; name: string; mode: "live" | "test" }
  | { type: "user"; id: string; subject: string; email: string | null; role: Role };

/** Who is calling, for which org, with which scopes: established once per request. */
export interface Caller {
  orgId: string;
  actor: Actor;
  scopes: Scope[];
  livemode: boolean;
}

/**
 * The statements that authenticate a credential inside the request's first transaction. The
 * last one sets `app.org_id` only when the credential is valid, unrevoked and carries the
 * scope, so every statement after it sees the org's rows, and without it sees none and can
 * write nothing: the database enforces the check, not only this code. Rendered once per isolate
 * (they open every authenticated request) and filled with each request's values.
 */
export function authStatements(
  db: Database,
  credential: Credential,
  scope: ScopeRequirement | null,
): BatchItem<"pg">[] {
  if (credential.kind === "api_key") {
    const accepted = scope === null ? null : `{${acceptedScopes(scope).join(",")}}`;
    const values = { hash: credential.hash, accepted };
    return [settingOf(db, { name: "app.api_key_hash", value: credential.hash }), keyOf(db, values)];
  }
  const roles = scope === null ? null : `{${rolesWithScope(scope).join(",")}}`;
  const values = { subject: credential.subject, orgId: credential.orgId, roles };
  return [
    settingOf(db, { name: "app.user_subject", value: credential.subject }),
    membershipOf(db, values),
  ];
}

/** A transaction-local setting: `app.org_id` and what authentication looks up by. */
export const settingOf = preparedOnce((db, v: Placeholders<{ name: string; value: string }>) =>
  db.execute(sql`select set_config(${v.name}, ${v.value}, true)`),
);

const keyOf = preparedOnce((db, v: Placeholders<{ hash: string; accepted: string | null }>) =>
  // The scopes as JSON: the driver reads a text[] one character at a time.
  db.execute(sql`select k.id, k.org_id, k.name, k.mode, to_json(k.scopes) as scopes, k.revoked_at,
        set_config('app.org_id',
          case when k.revoked_at is null and (${v.accepted}::text[] is null or k.scopes && ${v.accepted}::text[])
            then k.org_id::text else '' end, true) as tenant
      from api_keys k where k.key_hash = ${v.hash}`),
);

// LIMIT in a CTE so set_config runs for the one chosen membership, not for every candidate.
const membershipOf = preparedOnce(
  (db, v: Placeholders<{ subject: string; orgId: string | null; roles: string | null }>) =>
    db.execute(sql`with chosen as (
          select m.org_id, m.role, u.id as user_id
          from memberships m join users u on u.id = m.user_id
          where u.idp_subject = ${v.subject}
            and (${v.orgId}::uuid is null or m.org_id = ${v.orgId}::uuid)
          order by m.created_at, m.org_id
          limit 1)
        select chosen.*, set_config('app.org_id',
          case when ${v.roles}::text[] is null or chosen.role = any(${v.roles}::text[])
            then chosen.org_id::text else '' end, true) as tenant
        from chosen`),
);

interface KeyRow {
  id: string;
  org_id: string;
  name: string;
  mode: "live" | "test";
  scopes: Scope[];
  revoked_at: Date | null;
}

interface MembershipRow {
  org_id: string;
  role: Role;
  user_id: string;
}

/** Turns the rows of the last auth statement into a caller, or the 401/403 they mean. */
export function callerFromRows(
  credential: Credential,
  scope: ScopeRequirement | null,
  rows: Record<string, unknown>[],
): Caller {
  const row = rows[0];
  if (credential.kind === "api_key") {
    const key = row as KeyRow | undefined;
    // Revoked or never issued: one answer, so a caller never learns that a key existed.
    if (!key || key.revoked_at !== null) throw unauthenticated("unknown_key");
    if (scope !== null && !acceptedScopes(scope).some((s) => key.scopes.includes(s))) {
      throw new ApiError("insufficient_scope", scopeDetails(scope));
    }
    return {
      orgId: key.org_id,
      actor: { type: "api_key", id: key.id, name: key.name, mode: key.mode },
      scopes: key.scopes,
      livemode: key.mode === "live",
    };
  }
  const membership = row as MembershipRow | undefined;
  if (!membership) throw new ApiError("no_organization");
  const scopes = scopesOfRole(membership.role);
  if (scope !== null && !acceptedScopes(scope).some((s) => scopes.includes(s))) {
    throw new ApiError("insufficient_scope", scopeDetails(scope));
  }
  return {
    orgId: membership.org_id,
    actor: {
      type: "user",
      id: membership.user_id,
      subject: credential.subject,
      email: credential.email,
      role: membership.role,
    },
    scopes,
    // The request's x-mode (docs/console.md, "Test mode"): a person works in either mode.
    livemode: credential.livemode,
  };
}
