/**
 * The local identity provider's server (scripts/dev-idp-server.ts) as an OpenID Connect client
 * meets it: discovery, the authorize page and its checks, and the token endpoint's (one-time
 * codes, PKCE, redirect_uri, client), and `npm run token` minting the same person as its sign-in.
 * The Worker's side of the flow is in test/worker/console-auth.test.ts.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writePrivateFile } from "../../scripts/dev-files";
import { type LocalIdpServer, startLocalIdpServer } from "../../scripts/dev-idp-server";
import { localIdentityProvider } from "../../scripts/local-keys";

const REPO = resolve(import.meta.dirname, "../..");

const REDIRECT = "http://127.0.0.1:8787/console/auth/callback";
const idp = localIdentityProvider("");
let server: LocalIdpServer;

beforeAll(async () => {
  server = await startLocalIdpServer({
    host: "127.0.0.1",
    port: 0,
    privateJwk: idp.privateJwk as typeof idp.privateJwk & { kid: string },
    jwks: idp.jwks,
    clientId: idp.audience,
    redirectUris: [REDIRECT],
  });
});
afterAll(() => server.close());

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

function request(overrides: Record<string, string | null> = {}, challenge = pkce().challenge) {
  const params = new URLSearchParams({
    client_id: idp.audience,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid email",
    state: "state-1",
    nonce: "nonce-1",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  for (const [name, value] of Object.entries(overrides)) {
    if (value === null) params.delete(name);
    else params.set(name, value);
  }
  return params;
}

async function code(user: string, challenge: string): Promise<string> {
  const form = request({ username: user }, challenge);
  const res = await fetch(`${server.url}/authorize`, {
    method: "POST",
    body: form,
    redirect: "manual",
  });
  expect(res.status).toBe(303);
  const back = new URL(res.headers.get("location") as string);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  expect(back.searchParams.get("state")).toBe("state-1");
  return back.searchParams.get("code") as string;
}

function exchange(fields: Record<string, string>) {
  return fetch(`${server.url}/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: idp.audience,
      redirect_uri: REDIRECT,
      ...fields,
    }),
  });
}

describe("the local identity provider", () => {
  it("publishes its discovery document and key set at its own origin", async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string;
    };
    expect(doc).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/authorize`,
      token_endpoint: `${server.url}/token`,
      jwks_uri: `${server.url}/jwks.json`,
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
    });
    expect(await (await fetch(doc.jwks_uri)).json()).toEqual(idp.jwks);
  });

  it("shows a labelled user name field and a Sign in button under a strict policy", async () => {
    const res = await fetch(`${server.url}/authorize?${request()}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; form-action 'self' http://127.0.0.1:8787; base-uri 'none'; frame-ancestors 'none'",
    );
    const html = await res.text();
    expect(html).toContain('<label for="username">User name</label>');
    expect(html).toMatch(/<input id="username" name="username" type="text" required/);
    expect(html).toContain('<button type="submit">Sign in</button>');
    expect(html).toContain('<input type="hidden" name="state" value="state-1">');
  });

  it.each([
    ["an unknown client", { client_id: "someone-else" }, "unknown client_id"],
    [
      "an unregistered redirect_uri",
      { redirect_uri: "https://evil.example/cb" },
      "redirect_uri is not registered for this client",
    ],
    ["another response_type", { response_type: "token" }, "response_type must be code"],
    ["plain PKCE", { code_challenge_method: "plain" }, "code_challenge_method must be S256"],
    ["no PKCE", { code_challenge: null }, "code_challenge must be a base64url SHA-256"],
    ["no openid scope", { scope: "email" }, "scope must include openid"],
    ["no state", { state: null }, "state is required"],
  ])("refuses %s with a page, never a redirect", async (_, overrides, message) => {
    const res = await fetch(`${server.url}/authorize?${request(overrides)}`, {
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain(`<p>${message}</p>`);
  });

  it("refuses a user name it cannot turn into a subject, and shows the form again", async () => {
    const res = await fetch(`${server.url}/authorize`, {
      method: "POST",
      body: request({ username: "a b" }),
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p role="alert">');
    expect(html).toContain("User name");
  });

  it("exchanges a code once, with its PKCE verifier, for an ID token of the user", async () => {
    const { verifier, challenge } = pkce();
    const issued = await code("ada", challenge);
    const res = await exchange({ code: issued, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { id_token: string };
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    const { payload, protectedHeader } = await jwtVerify(
      body.id_token,
      createLocalJWKSet(idp.jwks as never),
      { issuer: server.url, audience: idp.audience },
    );
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", kid: "local-idp" });
    expect(payload).toMatchObject({
      sub: "local|ada",
      email: "ada@example.test",
      nonce: "nonce-1",
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);

    const again = await exchange({ code: issued, code_verifier: verifier });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({
      error: "invalid_grant",
      error_description: "unknown, used or expired code",
    });
  });

  it.each([
    [
      "a wrong verifier",
      { code_verifier: randomBytes(32).toString("base64url") },
      "invalid_grant",
      "code_verifier does not match the code_challenge",
    ],
    [
      "another redirect_uri",
      { redirect_uri: "http://127.0.0.1:8787/elsewhere" },
      "invalid_grant",
      "redirect_uri does not match the authorization request's",
    ],
    [
      "another client",
      { client_id: "someone-else" },
      "invalid_client",
      "client_id does not match the code's",
    ],
  ])("refuses %s, and the code is spent", async (_, fields, error, description) => {
    const { verifier, challenge } = pkce();
    const issued = await code("ada", challenge);
    const res = await exchange({ code: issued, code_verifier: verifier, ...fields });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error, error_description: description });
    const retry = await exchange({ code: issued, code_verifier: verifier });
    expect(((await retry.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("signs in a user name as the same person `npm run token -- --sub` mints", async () => {
    const { verifier, challenge } = pkce();
    const res = await exchange({ code: await code("alice", challenge), code_verifier: verifier });
    const { id_token } = (await res.json()) as { id_token: string };
    const keys = createLocalJWKSet(idp.jwks as never);
    const options = { issuer: server.url, audience: idp.audience };
    const signedIn = (await jwtVerify(id_token, keys, options)).payload;

    // `npm run token` as a developer runs it, reading this provider's key from its state.
    const stateDir = mkdtempSync(join(tmpdir(), "agent-risk-token-"));
    try {
      const state = { ...idp, issuer: server.url };
      writePrivateFile(join(stateDir, ".data", "local-idp.json"), JSON.stringify(state));
      const run = (...args: string[]) =>
        promisify(execFile)("npm", ["run", "-s", "token", "--", ...args], {
          cwd: REPO,
          env: { ...process.env, DEV_STATE_DIR: stateDir },
        });
      const { stdout } = await run("--sub", "alice");
      const minted = (await jwtVerify(stdout.trim().split("\n").at(-1) ?? "", keys, options))
        .payload;
      const person = { sub: "local|alice", email: "alice@example.test", email_verified: true };
      expect(signedIn).toMatchObject(person);
      expect(minted).toMatchObject(person);

      // A name the sign-in page refuses is refused by the command too, and so is a way to
      // name another email than the user name's.
      const refused = await run("--sub", "a b").catch((error) => error);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("A user name is 1 to 64 letters");
      const email = await run("--sub", "alice", "--email", "a@example.com").catch((e) => e);
      expect(email.code).toBe(1);
      expect(email.stderr).toContain("Unknown option '--email'");
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
