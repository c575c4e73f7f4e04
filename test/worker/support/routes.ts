import type { Scope } from "../../../src/auth/scopes";
import { call, type TestOrg } from "./api";

/** Every authenticated route, with what the common auth/scope/tenant tests need to call it. */
export interface RouteCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  scope: Scope | null;
  sessionOnly?: boolean;
  /** Needs only a signed-in person, not an org (creating the org). */
  orgless?: boolean;
  body?: unknown;
  /** Creates the resource named by `{id}` in the given org. */
  resource?: (org: TestOrg) => Promise<string>;
}

export const ROUTES: RouteCase[] = [
  { method: "GET", path: "/v1/me", scope: null },
  { method: "POST", path: "/v1/orgs", scope: null, sessionOnly: true, orgless: true },
  {
    method: "POST",
    path: "/v1/api-keys",
    scope: "keys:write",
    sessionOnly: true,
    body: { name: "k", scopes: ["assess:read"] },
  },
  { method: "GET", path: "/v1/api-keys", scope: "keys:read", sessionOnly: true },
  {
    method: "POST",
    path: "/v1/api-keys/{id}/revoke",
    scope: "keys:write",
    sessionOnly: true,
    resource: async (org) => (await org.key(["assess:read"])).id,
  },
  { method: "GET", path: "/v1/audit", scope: "audit:read" },
  { method: "GET", path: "/v1/audit/verify", scope: "audit:read" },
  { method: "GET", path: "/v1/audit/export", scope: "audit:read" },
  { method: "GET", path: "/v1/audit/checkpoints", scope: "audit:read" },
  {
    method: "GET",
    path: "/v1/audit/{id}/proof",
    scope: "audit:read",
    resource: async (org) => (await call("/v1/audit", { token: org.token })).json.data[0].id,
  },
];
