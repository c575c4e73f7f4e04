import { type AgentCard, generateAgentCardSignature } from "@a2a-js/sdk";
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { canonicalize } from "#audit/canonical";
import { call, type TestOrg } from "./api";

/** Creates a principal in the org (as its owner) and returns its id. */
export async function newPrincipal(org: TestOrg, body: Record<string, unknown> = {}) {
  const res = await call("/v1/principals", {
    method: "POST",
    token: org.token,
    body: { name: "Ada Lovelace", email: "ada@example.com", ...body },
  });
  if (res.status !== 201) throw new Error(`principal creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** Creates an agent (and a principal for it) in the org and returns the agent record. */
export async function newAgent(org: TestOrg, body: Record<string, unknown> = {}) {
  const principalId = await newPrincipal(org);
  const res = await call("/v1/agents", {
    method: "POST",
    token: org.token,
    body: { principal_id: principalId, name: "Shopping agent", ...body },
  });
  if (res.status !== 201) throw new Error(`agent creation failed: ${res.status} ${res.text}`);
  return res.json;
}

export interface AgentKeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
  kid: string;
  alg: "EdDSA" | "ES256" | "RS256";
}

export async function keyPair(alg: AgentKeyPair["alg"] = "EdDSA"): Promise<AgentKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, kid: await calculateJwkThumbprint(publicJwk), alg };
}

/** Registers a fresh key pair for the agent and returns it. */
export async function registerKey(org: TestOrg, agentId: string, alg?: AgentKeyPair["alg"]) {
  const pair = await keyPair(alg);
  const res = await call(`/v1/agents/${agentId}/keys`, {
    method: "POST",
    token: org.token,
    body: { jwk: pair.publicJwk },
  });
  if (res.status !== 201) throw new Error(`key registration failed: ${res.status} ${res.text}`);
  return pair;
}

/** An A2A v0.3 Agent Card (the AP2 samples' merchant card), unsigned. */
export function merchantCard(): Record<string, unknown> {
  return {
    name: "MerchantAgent",
    description: "A sales assistant agent for a merchant.",
    url: "https://merchant.example.com/a2a/merchant_agent",
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
    version: "1.0.0",
    defaultInputModes: ["json"],
    defaultOutputModes: ["json"],
    capabilities: {
      extensions: [
        {
          uri: "https://github.com/google-agentic-commerce/ap2/v1",
          description: "Supports the Agent Payments Protocol.",
          required: true,
        },
      ],
    },
    skills: [
      {
        id: "search_catalog",
        name: "Search Catalog",
        description: "Searches the merchant's catalog.",
        tags: ["merchant", "search", "catalog"],
      },
    ],
  };
}

/**
 * Signs a card as A2A prescribes: a JWS with detached payload over the RFC 8785 canonical card
 * without `signatures`, `alg`, `typ` and `kid` in the protected header.
 */
export async function signCard(
  card: Record<string, unknown>,
  pair: AgentKeyPair,
  options: { kid?: string; payload?: string } = {},
) {
  const { signatures: _, ...unsigned } = card;
  const payload = new TextEncoder().encode(options.payload ?? canonicalize(unsigned));
  const jws = await new CompactSign(payload)
    .setProtectedHeader({ alg: pair.alg, typ: "JOSE", kid: options.kid ?? pair.kid })
    .sign(pair.privateKey);
  const [protectedHeader, , signature] = jws.split(".");
  const existing = (card.signatures as unknown[] | undefined) ?? [];
  return { ...card, signatures: [...existing, { protected: protectedHeader, signature }] };
}

/**
 * Signs a card with the official A2A JS SDK, as an agent using it would: `kid` the RFC 7638
 * thumbprint of its key. What the agent publishes is JSON, so that is what this returns.
 */
export async function sdkSignCard(
  card: Record<string, unknown>,
  pair: AgentKeyPair,
): Promise<Record<string, unknown>> {
  const sign = generateAgentCardSignature(pair.privateKey, {
    alg: pair.alg,
    kid: pair.kid,
    typ: "JOSE",
  });
  return JSON.parse(JSON.stringify(await sign(card as unknown as AgentCard)));
}
