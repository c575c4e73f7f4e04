import { env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { compressStatusList, setStatus } from "../../src/status-lists/encoding";
import {
  AUD,
  buildChain,
  type Claims,
  closedPayment,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../support/ap2-chains";
import { call } from "./support/api";
import { assessOk, orgWithKey, signalTypes } from "./support/assess";
import { expectRefused, registerHolder } from "./support/credentials";

// POST /v1/assess with a credential whose root or hop names a Token Status List
// (draft-ietf-oauth-status-list §6.2; docs/status-lists.md, "Checked"). The lists are served by
// the fixture server and signed here as the credential's issuer would sign them.

const PRESENTATION = { aud: AUD, nonce: NONCE };
const now = () => Math.floor(Date.now() / 1000);

/** A place on the fixture server for one list; `gets()` counts the Worker's fetches of it. */
function listPlace() {
  const name = `status-${crypto.randomUUID()}`;
  const uri = `${env.TEST_FIXTURE_URL}/docs/${name}`;
  return {
    uri,
    gets: async () =>
      ((await (await fetch(`${env.TEST_FIXTURE_URL}/gets/${name}`)).json()) as []).length,
  };
}

/** Publishes a `statuslist+jwt` at `uri` with `statuses` set, signed by `signer`. */
async function publish(
  uri: string,
  signer: Signer,
  statuses: Record<number, number>,
  options: { bits?: 1 | 2 | 4 | 8; claims?: Claims; sub?: string } = {},
) {
  const bits = options.bits ?? 2;
  const bytes = new Uint8Array((1024 * bits) / 8);
  for (const [idx, status] of Object.entries(statuses)) setStatus(bytes, bits, Number(idx), status);
  const jwt = await new SignJWT({
    sub: options.sub ?? uri,
    iat: now(),
    exp: now() + 3600,
    ttl: 300,
    status_list: { bits, lst: await compressStatusList(bytes) },
    ...options.claims,
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.jwk.kid as string, typ: "statuslist+jwt" })
    .sign(signer.privateKey);
  const res = await fetch(uri, {
    method: "PUT",
    headers: { "content-type": "application/statuslist+jwt" },
    body: jwt,
  });
  expect(res.status).toBe(204);
}

interface Setup {
  key: string;
  issuer: Signer;
  agent: Signer;
}

async function setUp(statusRequired: boolean): Promise<Setup> {
  const issuer = await newSigner("ES256", "issuer-1");
  const agent = await newSigner("ES256");
  const { org, key } = await orgWithKey();
  const res = await call("/v1/credential-issuers", {
    method: "POST",
    token: org.token,
    body: { name: "Wallet", jwks: { keys: [issuer.jwk] }, status_required: statusRequired },
  });
  expect(res.status).toBe(201);
  expect(res.json.status_required).toBe(statusRequired);
  await registerHolder(org, agent.jwk);
  return { key, issuer, agent };
}

/** A fresh two-hop chain whose root (or, with `onLeaf`, whose last hop) names `status`. */
async function credential(s: Setup, status: { idx: number; uri: string }, onLeaf = false) {
  const t = now();
  const reference = { status: { status_list: status } };
  return buildChain([
    {
      signer: s.issuer,
      mandate: openPayment(s.agent, [RANGE], { iat: t - 3600, exp: t + 86_400 }),
      claims: onLeaf ? {} : reference,
    },
    {
      signer: s.agent,
      mandate: closedPayment(5000, { iat: t - 60, exp: t + 3600 }),
      claims: { iat: t - 60, ...(onLeaf ? reference : {}) },
    },
  ]);
}

async function assessWith(s: Setup, status: { idx: number; uri: string }, onLeaf = false) {
  const body = await assessOk(s.key, {
    credential: await credential(s, status, onLeaf),
    presentation: PRESENTATION,
  });
  return body.outcome;
}

describe("a credential that names a status list", () => {
  it("VALID: approved, and the list is fetched once for its ttl", async () => {
    const s = await setUp(false);
    const place = listPlace();
    await publish(place.uri, s.issuer, { 3: 1 });
    const first = await assessWith(s, { idx: 7, uri: place.uri });
    expect(first.outcome.decision).toBe("approve");
    expect(first.credential).toMatchObject({ verified: true, failure: null });
    const second = await assessWith(s, { idx: 8, uri: place.uri });
    expect(second.outcome.decision).toBe("approve");
    expect(await place.gets()).toBe(1);
  });

  it("INVALID on the root: denied, credential_revoked", async () => {
    const s = await setUp(false);
    const place = listPlace();
    await publish(place.uri, s.issuer, { 5: 1 });
    const outcome = await assessWith(s, { idx: 5, uri: place.uri });
    expectRefused(outcome, "revoked");
  });

  it("INVALID on the last hop: denied as well", async () => {
    const s = await setUp(false);
    const place = listPlace();
    await publish(place.uri, s.issuer, { 9: 1 }, { bits: 1 });
    expectRefused(await assessWith(s, { idx: 9, uri: place.uri }, true), "revoked");
  });

  it("SUSPENDED: reviewed, never approved, with credential_suspended", async () => {
    const s = await setUp(false);
    const place = listPlace();
    await publish(place.uri, s.issuer, { 2: 2 });
    const outcome = await assessWith(s, { idx: 2, uri: place.uri });
    expect(outcome.outcome.decision).toBe("review");
    expect(outcome.credential?.verified).toBe(true);
    expect(signalTypes(outcome)).toContain("credential_suspended");
    expect(outcome.outcome.reason).toContain("suspended");
  });

  it("unfetchable while the issuer requires status: review, never approve", async () => {
    const s = await setUp(true);
    const outcome = await assessWith(s, { idx: 0, uri: listPlace().uri });
    expect(outcome.outcome.decision).toBe("review");
    expect(outcome.signals).toContainEqual({
      category: "mandate",
      type: "credential_status_unknown",
      severity: "high",
    });
  });

  it("unfetchable while the issuer does not require status: the rest decides, a low signal", async () => {
    const s = await setUp(false);
    const outcome = await assessWith(s, { idx: 0, uri: listPlace().uri });
    expect(outcome.outcome.decision).toBe("approve");
    expect(outcome.signals).toContainEqual({
      category: "mandate",
      type: "credential_status_unknown",
      severity: "low",
    });
  });

  it("a list not signed by the credential's issuer, or naming another sub, is no statement", async () => {
    const s = await setUp(true);
    const stranger = await newSigner("ES256", "issuer-1");
    const forged = listPlace();
    await publish(forged.uri, stranger, {});
    expect((await assessWith(s, { idx: 0, uri: forged.uri })).outcome.decision).toBe("review");
    const moved = listPlace();
    await publish(moved.uri, s.issuer, {}, { sub: "https://elsewhere.example/list" });
    expect((await assessWith(s, { idx: 0, uri: moved.uri })).outcome.decision).toBe("review");
    const short = listPlace();
    await publish(short.uri, s.issuer, {});
    const past = await assessWith(s, { idx: 1_000_000, uri: short.uri });
    expect(signalTypes(past)).toContain("credential_status_unknown");
    expect(past.outcome.decision).toBe("review");
  });

  it("an expired list is fetched again and is no statement", async () => {
    const s = await setUp(true);
    const place = listPlace();
    await publish(place.uri, s.issuer, {}, { claims: { exp: now() - 10 } });
    expect((await assessWith(s, { idx: 0, uri: place.uri })).outcome.decision).toBe("review");
    expect((await assessWith(s, { idx: 0, uri: place.uri })).outcome.decision).toBe("review");
    expect(await place.gets()).toBe(2);
  });
});
