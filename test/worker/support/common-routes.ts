/** The common route tests, shared by test/worker/common-routes-*.test.ts. */
import { describe, expect, it } from "vitest";
import { acceptedScopes, scopeDetails } from "../../../src/auth/scopes";
import { ALL_KEY_SCOPES, call, callRaw, newOrg, sessionToken, type TestOrg } from "./api";
import { addMember } from "./db";
import { errorBody, refusedBody } from "./errors";
import { modeOf, ROUTES, type RouteCase } from "./routes";

const SOME_ID = "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e";

/**
 * The orgs the tests share. Each test used to found its own (two for the cross-tenant ones):
 * about a thousand orgs per file, each with its ledger object, and the founding was most of
 * each test's time. What these tests check depends only on the credential, its scopes and
 * mode, and whose resource it is, so one org per role per file serves them all: `owner` holds
 * the resources and the keys, `member` is a user of another org added to the owner's as a
 * member, and `intruder` an org of its own that never belongs to the owner's. A key is made
 * once per set of scopes and mode, except the one a test revokes.
 */
const orgs = new Map<string, Promise<TestOrg>>();
function shared(role: "owner" | "member" | "intruder"): Promise<TestOrg> {
  let org = orgs.get(role);
  if (!org) {
    org = newOrg();
    orgs.set(role, org);
  }
  return org;
}
async function owner(): Promise<TestOrg> {
  return shared("owner");
}
/** A user of another org who is a member of the owner's org. */
async function member(): Promise<TestOrg> {
  let joined = orgs.get("member joined");
  if (!joined) {
    joined = (async () => {
      const [org, other] = await Promise.all([owner(), shared("member")]);
      await addMember(org.id, other.subject, "member");
      return other;
    })();
    orgs.set("member joined", joined);
  }
  return joined;
}
const keys = new Map<string, Promise<{ id: string; key: string }>>();
/** The owner's key with `scopes` in `mode`, made once. */
function keyOf(org: TestOrg, scopes: readonly string[], mode: "live" | "test" = "live") {
  const name = `${org.id} ${mode} ${[...scopes].sort().join(",")}`;
  let key = keys.get(name);
  if (!key) {
    key = org.key([...scopes] as never, mode);
    keys.set(name, key);
  }
  return key;
}

/** The route's path with its parameters filled: `{id}` (or each named one), others made up. */
function pathFor(route: RouteCase, ids: string | Record<string, string> = SOME_ID) {
  const named = typeof ids === "string" ? { id: ids } : ids;
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => named[name] ?? "made-up");
}

function request(
  route: RouteCase,
  credential: { key?: string; token?: string; headers?: Record<string, string> },
) {
  return callRaw(pathFor(route), { method: route.method, body: route.body, ...credential });
}

/**
 * The common auth, scope and cross-tenant tests of every authenticated route, for one shard of
 * the route table: the suite is split over several files because the time of each test grows
 * with what its file has already created in the runtime, so one file of 500 tests took minutes.
 */
export function commonRouteTests(shard: number, shards: number) {
  const routes = ROUTES.filter((_, i) => i % shards === shard - 1);
  describe.each(routes)("$method $path", (route) => {
    it("answers 401 without a credential", async () => {
      const res = await request(route, {});
      expect(res.status).toBe(401);
      expect(res.error).toEqual(refusedBody("missing"));
    });

    it("answers 401 to a garbage API key, in either header", async () => {
      for (const [credential, refusal] of [
        [{ key: "aar_live_garbage" }, "malformed_key"],
        [{ key: `aar_live_${"A".repeat(43)}` }, "unknown_key"],
        [{ headers: { authorization: `Bearer aar_test_${"B".repeat(43)}` } }, "unknown_key"],
        [{ headers: { authorization: "Bearer garbage" } }, "malformed_session"],
        [{ headers: { authorization: "Basic Zm9vOmJhcg==" } }, "not_bearer"],
      ] as const) {
        const res = await request(route, credential);
        expect(res.status).toBe(401);
        expect(res.error).toEqual(refusedBody(refusal));
      }
    });

    it("answers 401 to an expired session", async () => {
      const res = await request(route, { token: await sessionToken({}, { expiresIn: "-5m" }) });
      expect(res.status).toBe(401);
      expect(res.error).toEqual(refusedBody("expired_session"));
    });

    it("answers 401 to a revoked key on the very next request", async () => {
      const org = await owner();
      const { id, key } = await org.key(ALL_KEY_SCOPES);
      const revoked = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
      expect(revoked.status).toBe(200);
      const res = await request(route, { key });
      expect(res.status).toBe(401);
      expect(res.error).toEqual(refusedBody("unknown_key"));
    });

    if (route.sessionOnly) {
      it("answers 403 session_required to a valid API key", async () => {
        const org = await owner();
        const { key } = await keyOf(org, ALL_KEY_SCOPES);
        const res = await request(route, { key });
        expect(res.status).toBe(403);
        expect(res.error).toEqual(errorBody("session_required"));
      });
    }

    if (route.scope) {
      const accepted = acceptedScopes(route.scope);
      const details = scopeDetails(route.scope);
      if (!route.sessionOnly) {
        it(`answers 403 to a key without ${accepted.join(" or ")}`, async () => {
          const org = await owner();
          const { key } = await keyOf(
            org,
            ALL_KEY_SCOPES.filter((s) => !accepted.includes(s)),
          );
          const res = await request(route, { key });
          expect(res.status).toBe(403);
          expect(res.error).toEqual(errorBody("insufficient_scope", details));
        });
        if (accepted.length > 1) {
          it.each(accepted)("lets a key with only %s past the scope check", async (scope) => {
            const org = await owner();
            const { key } = await keyOf(org, [scope]);
            const res = await request(route, { key });
            expect(res.status).not.toBe(401);
            expect(res.status).not.toBe(403);
          });
        }
      }
      it(`answers 403 to a member session without ${accepted.join(" or ")}`, async () => {
        const org = await owner();
        const other = await member();
        const res = await request(route, { token: other.token, headers: { "x-org-id": org.id } });
        expect(res.status).toBe(403);
        expect(res.error).toEqual(errorBody("insufficient_scope", details));
      });
    }

    if (route.liveOnly && !route.sessionOnly) {
      it("answers 403 live_key_required to a test key with every scope", async () => {
        const org = await owner();
        const ids = route.resource ? await route.resource(org) : SOME_ID;
        const { key } = await keyOf(org, ALL_KEY_SCOPES, "test");
        const res = await callRaw(pathFor(route, ids), {
          method: route.method,
          body: route.body,
          key,
        });
        expect(res.status).toBe(403);
        expect(res.json).toEqual(
          errorBody("live_key_required", [
            {
              path: "",
              message: "this changes what live and test mode share: use a live key or a session",
            },
          ]),
        );
      });

      it("lets a live key and a console session past the live-key check", async () => {
        const org = await owner();
        const { key } = await keyOf(org, ALL_KEY_SCOPES, "live");
        for (const credential of [{ key }, { token: org.token }]) {
          const ids = route.resource ? await route.resource(org) : SOME_ID;
          const res = await callRaw(pathFor(route, ids), {
            method: route.method,
            body: route.body,
            ...credential,
          });
          expect(res.status).not.toBe(401);
          expect(res.status).not.toBe(403);
        }
      });
    }

    if (route.testOnly) {
      it("answers 400 test_mode_only to a live key and a live-mode session with every scope", async () => {
        const org = await owner();
        const { key } = await keyOf(org, ALL_KEY_SCOPES, "live");
        for (const credential of [{ key }, { token: org.token }]) {
          const ids = route.resource ? await route.resource(org) : SOME_ID;
          const res = await callRaw(pathFor(route, ids), {
            method: route.method,
            body: route.body,
            ...credential,
          });
          expect(res.status).toBe(400);
          expect(res.json).toEqual(
            errorBody("test_mode_only", [
              {
                path: "",
                message:
                  "test clocks exist only in test mode: use a test key, or a session with x-mode: test",
              },
            ]),
          );
        }
      });

      it("lets a test key and a session with x-mode: test past the mode check", async () => {
        const org = await owner();
        const { key } = await keyOf(org, ALL_KEY_SCOPES, "test");
        const session = { token: org.token, headers: { "x-mode": "test" } };
        for (const credential of [{ key }, session]) {
          const ids = route.resource ? await route.resource(org) : SOME_ID;
          const res = await callRaw(pathFor(route, ids), {
            method: route.method,
            body: route.body,
            ...credential,
          });
          expect(res.status).toBeLessThan(300);
        }
      });
    }

    if (!route.liveOnly && !route.sessionOnly) {
      it("lets a test key with every scope past the mode check", async () => {
        const org = await owner();
        const ids = route.resource ? await route.resource(org) : SOME_ID;
        const { key } = await keyOf(org, ALL_KEY_SCOPES, "test");
        const res = await callRaw(pathFor(route, ids), {
          method: route.method,
          body: route.body,
          key,
        });
        expect(res.status).not.toBe(401);
        expect(res.status).not.toBe(403);
      });
    }

    if (route.filters) {
      const filters = Object.entries(route.filters);
      it("answers 400 to a bad filter, only after the credential and scope are checked", async () => {
        const org = await owner();
        const ids = route.resource ? await route.resource(org) : SOME_ID;
        const { key } = await keyOf(org, ALL_KEY_SCOPES, modeOf(route));
        const accepted = route.scope ? acceptedScopes(route.scope) : [];
        const { key: unscoped } = await keyOf(
          org,
          ALL_KEY_SCOPES.filter((s) => !accepted.includes(s)),
          modeOf(route),
        );
        for (const [name, value] of filters) {
          const path = `${pathFor(route, ids)}?${new URLSearchParams({ [name]: value })}`;
          const anonymous = await callRaw(path, { method: route.method });
          expect(anonymous.status, `${name} without a credential`).toBe(401);
          expect(anonymous.error).toEqual(refusedBody("missing"));
          if (accepted.length > 0) {
            const refused = await callRaw(path, { method: route.method, key: unscoped });
            expect(refused.status, `${name} without the scope`).toBe(403);
            expect(refused.json.error).toBe("insufficient_scope");
          }
          const res = await callRaw(path, { method: route.method, key });
          expect(res.status, `${name}=${value}`).toBe(400);
          expect(res.json.error).toBe("invalid_request");
          expect(res.json.details.map((d: { path: string }) => d.path)).toContain(name);
        }
      });
    }

    if (route.resource) {
      const make = route.resource;
      it("answers 404 for another org's resource", async () => {
        const id = await make(await owner());
        const intruder = await shared("intruder");
        const credential = route.sessionOnly
          ? { token: intruder.token }
          : { key: (await keyOf(intruder, ALL_KEY_SCOPES, modeOf(route))).key };
        const res = await callRaw(pathFor(route, id), {
          method: route.method,
          body: route.body,
          ...credential,
        });
        expect(res.status).toBe(404);
        expect(res.error).toEqual(errorBody("not_found"));
      });

      it("answers 404 for an id that is not a uuid", async () => {
        const org = await owner();
        const credential = route.sessionOnly
          ? { token: org.token }
          : { key: (await keyOf(org, ALL_KEY_SCOPES, modeOf(route))).key };
        const res = await callRaw(pathFor(route, "not-a-uuid"), {
          method: route.method,
          body: route.body,
          ...credential,
        });
        expect(res.status).toBe(404);
      });
    }
  });
}
