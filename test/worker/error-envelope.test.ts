import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { errorStatus } from "../../src/errors";
import { call, callRaw, newOrg, sessionToken } from "./support/api";
import { errorBody, refusedBody } from "./support/errors";

// docs/api.md, "Errors": every error is {error, message, details?, doc_url}, and doc_url is the
// code's entry in the reference the service serves at /docs.

const DOCS = `${env.PUBLIC_BASE_URL}/docs`;

describe("the error envelope", () => {
  it("says what went wrong in a sentence and where the code is documented", async () => {
    const res = await callRaw("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: "route_not_found",
      message: "No route has this path: check it against the API reference at /docs.",
      doc_url: `${DOCS}#description/route_not_found`,
    });
  });

  it("carries the validation hook's details beside its message", async () => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      raw: true,
      body: { name: "k", scopes: "assess:read" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        {
          path: "scopes",
          message: "Invalid input: expected array, received string",
          code: "invalid_type",
        },
      ]),
    );
    expect(res.error.message).toBe(
      "The request failed validation: correct each field named in details and send it again.",
    );
  });

  it("documents every code in the served reference, under the heading doc_url points to", async () => {
    const res = await callRaw("/openapi.json");
    const description: string = res.json.info.description;
    // The codes are the `###` headings of the "Errors" section (the reference's other sections,
    // "Getting started" and "Policy rules", have headings of their own).
    const errors = description.slice(description.indexOf("\n## Errors\n"));
    const section = errors.slice(
      0,
      errors.indexOf("\n## ", 1) === -1 ? undefined : errors.indexOf("\n## ", 1),
    );
    const headings = [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(Object.keys(errorStatus));
    // A heading's anchor is its slug (lowercase letters, digits, `_` and `-` stay as they are):
    // each code is already its own.
    for (const code of headings) expect(code).toMatch(/^[a-z0-9_]+$/);
    expect(description).toContain(
      "### unauthenticated\n\n`401` The request carries no valid credential",
    );
  });
});

describe("a 401 says what was wrong with the credential", () => {
  it("missing: no credential at all", async () => {
    const res = await call("/v1/me");
    expect(res.status).toBe(401);
    expect(res.error.details).toEqual({ reason: "missing" });
    expect(res.error).toEqual(refusedBody("missing"));
  });

  it.each([
    ["an x-api-key that is no key", { "x-api-key": "aar_live_short" }, "malformed"],
    ["a Basic Authorization", { authorization: "Basic Zm9vOmJhcg==" }, "malformed"],
    ["a Bearer token that is no JWT", { authorization: "Bearer garbage" }, "malformed"],
  ])("malformed: %s", async (_, headers, reason) => {
    const res = await call("/v1/me", { headers });
    expect(res.status).toBe(401);
    expect(res.error.error).toBe("unauthenticated");
    expect(res.error.details).toEqual({ reason });
    expect(res.error.doc_url).toBe(`${DOCS}#description/unauthenticated`);
  });

  it("unknown: a revoked key and a key never issued answer exactly alike", async () => {
    const org = await newOrg();
    const { id, key } = await org.key(["assess:read"]);
    const revoked = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(revoked.status).toBe(200);
    const never = `aar_live_${"Q".repeat(43)}`;
    const answers = await Promise.all([call("/v1/me", { key }), call("/v1/me", { key: never })]);
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.json).toEqual({
        error: "unauthenticated",
        message: "The API key is not valid: it may have been revoked or mistyped.",
        details: { reason: "unknown" },
        doc_url: `${DOCS}#description/unauthenticated`,
      });
    }
    expect(answers[0]?.text).toBe(answers[1]?.text);
  });

  it("expired: a session token past its exp", async () => {
    const res = await call("/v1/me", { token: await sessionToken({}, { expiresIn: "-1m" }) });
    expect(res.status).toBe(401);
    expect(res.error).toEqual(refusedBody("expired_session"));
    expect(res.error.message).toBe("The session has expired: sign in again.");
  });
});
