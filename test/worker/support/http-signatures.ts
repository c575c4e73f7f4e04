import { env } from "cloudflare:test";
import type { JWK } from "jose";
import { expect } from "vitest";
import { call } from "./api";
import type { AgentKeyPair } from "./identity";

// An agent signing its own HTTP request (RFC 9421), as the tests of `http_signature` need it:
// independent of src/assess/http-signature/ (its own base and serialization), and checked
// against the RFC's and the Web Bot Auth drafts' published vectors by those tests.

export interface Covered {
  method: string;
  authority: string;
  path?: string;
  query?: string;
  scheme?: "https" | "http";
  headers?: Record<string, string>;
}

export interface SignOptions {
  pair: AgentKeyPair;
  covered: Covered;
  components?: string[];
  created?: number;
  expires?: number | null;
  nonce?: string | null;
  tag?: string | null;
  keyid?: string;
  label?: string;
  signatureAgent?: string;
}

const ALG = { EdDSA: "ed25519", ES256: "ecdsa-p256-sha256", RS256: "rsa-v1_5-sha256" } as const;
const SIGN = {
  EdDSA: { name: "Ed25519" },
  ES256: { name: "ECDSA", hash: "SHA-256" },
  RS256: { name: "RSASSA-PKCS1-v1_5" },
} as const;

function value(covered: Covered, component: string): string {
  const query = covered.query === undefined ? "" : `?${covered.query}`;
  switch (component) {
    case "@method":
      return covered.method;
    case "@authority":
      return covered.authority;
    case "@path":
      return covered.path ?? "/";
    case "@query":
      return query || "?";
    case "@target-uri":
      return `${covered.scheme ?? "https"}://${covered.authority}${covered.path ?? "/"}${query}`;
    default: {
      const header = covered.headers?.[component];
      if (header === undefined) throw new Error(`no ${component} to sign`);
      return header;
    }
  }
}

/** Signs `covered` and answers the `http_signature` object of an assess request. */
export async function signHttp(options: SignOptions) {
  const {
    pair,
    covered,
    components = ["@method", "@authority", "@path"],
    created = Math.floor(Date.now() / 1000),
    expires = created + 60,
    nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
    tag = "web-bot-auth",
    keyid = pair.kid,
    label = "sig1",
  } = options;
  let params = `(${components.map((c) => `"${c}"`).join(" ")});created=${created}`;
  if (expires !== null) params += `;expires=${expires}`;
  params += `;keyid="${keyid}";alg="${ALG[pair.alg]}"`;
  if (nonce !== null) params += `;nonce="${nonce}"`;
  if (tag !== null) params += `;tag="${tag}"`;
  const base = [
    ...components.map((c) => `"${c}": ${value(covered, c)}`),
    `"@signature-params": ${params}`,
  ].join("\n");
  const bytes = new Uint8Array(
    await crypto.subtle.sign(SIGN[pair.alg], pair.privateKey, new TextEncoder().encode(base)),
  );
  return {
    signature: `${label}=:${btoa(String.fromCharCode(...bytes))}:`,
    signature_input: `${label}=${params}`,
    ...(options.signatureAgent ? { signature_agent: options.signatureAgent } : {}),
    covered: { ...covered, path: covered.path ?? "/" },
  };
}

/** Publishes a JWKS at a fresh fixture URL; answers the `Signature-Agent` value naming it. */
export async function publishDirectory(keys: JWK[], label = "sig1") {
  const name = `directory-${crypto.randomUUID()}`;
  const res = await fetch(`${env.TEST_FIXTURE_URL}/docs/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/http-message-signatures-directory+json" },
    body: JSON.stringify({ keys }),
  });
  expect(res.status).toBe(204);
  return `${label}="${env.TEST_FIXTURE_URL}/docs/${name}";type=jwks_uri`;
}

/** A test clock of the test key's org frozen at `seconds` (unix); answers its id. */
export async function clockAt(key: string, seconds: number): Promise<string> {
  const res = await call("/v1/test-clocks", {
    method: "POST",
    key,
    body: { frozen_time: new Date(seconds * 1000).toISOString() },
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}
