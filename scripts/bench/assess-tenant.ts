/**
 * The organization `npm run bench:assess` assesses for, set up through the public API as a
 * customer would: a session from the run's identity provider, an org, an API key, a principal,
 * agents acting for it (one by default), each with a registered P-256 key, and an active policy.
 */
import { generateKeyPairSync } from "node:crypto";
import { importJWK, SignJWT } from "jose";
import type { LocalIdp } from "../dev-idp.ts";
import { type Consent, consentFor, p256KeyPair } from "./assess-credentials.ts";
import type { Client } from "./assess-http.ts";

export interface Agent {
  id: string;
  /** The agent's registered public key: open mandates carry it as `cnf.jwk`. */
  jwk: { kty: "EC"; crv: "P-256"; x: string; y: string };
}

export interface Tenant {
  orgId: string;
  apiKey: string;
  agents: Agent[];
  /** The credential mix's consent: its issuer registered, its holder the first agent. */
  consent: Consent;
}

export const POLICY_RULES = {
  max_amount: 1_000_000,
  currencies: ["USD", "EUR"],
  velocity: { window: "1h", max: 100_000 },
};

/**
 * The shadow policy `--shadow` installs: stricter limits, its own velocity window and a rule
 * list reading a window aggregate, so that the context read counts both policies' windows.
 */
export const SHADOW_RULES = {
  max_amount: 500_000,
  currencies: ["USD"],
  velocity: { window: "10m", max: 50_000 },
  grammar: 1,
  rules: [
    {
      id: "agent-burst",
      action: "review",
      when: { attr: "count.agent.PT10M", op: "gte", value: 40_000 },
    },
  ],
};

const KEY_SCOPES = ["assess:write", "assess:read", "agents:write", "issuers:write", "policy:write"];

/** A session of a new user of `idp` (each signs up its own org). */
export async function sessionToken(idp: LocalIdp): Promise<string> {
  const key = await importJWK(idp.privateJwk, "EdDSA");
  const subject = `bench-${crypto.randomUUID()}`;
  return new SignJWT({ email: `${subject}@example.com` })
    .setProtectedHeader({ alg: "EdDSA", kid: idp.privateJwk.kid, typ: "JWT" })
    .setIssuer(idp.issuer)
    .setAudience(idp.audience)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
}

function p256PublicJwk(): Agent["jwk"] {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { x, y } = publicKey.export({ format: "jwk" });
  if (!x || !y) throw new Error("P-256 key export without coordinates");
  return { kty: "EC", crv: "P-256", x, y };
}

export async function setUpTenant(
  client: Client,
  idp: LocalIdp,
  agentCount: number,
  shadow = false,
): Promise<Tenant> {
  const session = { authorization: `Bearer ${await sessionToken(idp)}` };
  const org = await client.json("/v1/orgs", 201, { method: "POST", headers: session });
  const created = await client.json("/v1/api-keys", 201, {
    method: "POST",
    headers: session,
    body: JSON.stringify({ name: "bench-assess", scopes: KEY_SCOPES }),
  });
  const apiKey = String(created.key);
  const asKey = { "x-api-key": apiKey };
  const principal = await client.json("/v1/principals", 201, {
    method: "POST",
    headers: asKey,
    body: JSON.stringify({ type: "company", name: "Bench Buyer GmbH", external_ref: "cust-1" }),
  });
  const agents: Agent[] = [];
  let holder: ReturnType<typeof p256KeyPair> | null = null;
  for (let n = 1; n <= agentCount; n++) {
    const agent = await client.json("/v1/agents", 201, {
      method: "POST",
      headers: asKey,
      body: JSON.stringify({
        principal_id: principal.id,
        name: `Procurement agent ${n}`,
        description: "Buys office supplies and notifies the buyer",
      }),
    });
    const pair = n === 1 ? p256KeyPair() : null;
    holder ??= pair;
    const jwk = pair?.publicJwk ?? p256PublicJwk();
    await client.json(`/v1/agents/${agent.id}/keys`, 201, {
      method: "POST",
      headers: asKey,
      body: JSON.stringify({ jwk }),
    });
    agents.push({ id: String(agent.id), jwk });
  }
  await client.json("/v1/policies", 201, {
    method: "POST",
    headers: asKey,
    body: JSON.stringify({ name: "bench", rules: POLICY_RULES, activate: true }),
  });
  if (shadow) {
    const draft = await client.json("/v1/policies", 201, {
      method: "POST",
      headers: asKey,
      body: JSON.stringify({ name: "bench shadow", rules: SHADOW_RULES }),
    });
    await client.json(`/v1/policies/${draft.id}/shadow`, 200, { method: "POST", headers: asKey });
  }
  const consent = await consentFor(holder ?? p256KeyPair());
  await client.json("/v1/credential-issuers", 201, {
    method: "POST",
    headers: asKey,
    body: JSON.stringify({ name: "Bench wallet", jwks: { keys: [consent.issuer] } }),
  });
  return { orgId: String(org.id), apiKey, agents, consent };
}
