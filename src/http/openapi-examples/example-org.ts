// The example org every hand-written response example is about: "Acme Checkout", its owner, its
// live API key, one principal and its shopping agent, paying the merchant of AssessRequest's
// example mandate; three assessments of 20 November 2026 (approved, held for review and
// resolved, denied by the active policy), the webhook endpoint that received them, and the audit
// ledger that recorded it all. Ids are UUIDv7 whose time is the object's `created`. Each
// resource's examples (the files beside this one) share these ids, so they tell one story.

/** Examples keyed by operation (`METHOD /path`): each the body of its success response. */
export type OperationExamples = Record<string, unknown>;

export const ORG = "01a19b53-dde4-753e-a76f-f5f9e8683a57";
export const OWNER = "01a19b53-ddd6-7576-a6f6-980ac7cb8893";
export const API_KEY = "01a19b59-8e96-79f4-b566-d4df368af2f4";
export const PRINCIPAL = "01a1a0db-f2ca-7f4f-872b-6c042fcc5cd4";
export const AGENT = "01a1a0de-6907-78cb-9aa9-4d0d45d0e308";
/** RFC 7638 thumbprint of the agent's P-256 key. */
export const AGENT_KEY = "ESqNMeKw-z8gcDH-8y96ckX3h7TU6FtF9lqluDQ1Now";
export const ENDPOINT = "01a1a6f7-aedf-7257-993b-2ba28b5cdd08";
export const POLICY = "01a1c659-4af2-7d18-b826-95b4e23a8e27";
export const SHADOW_POLICY = "01a1edee-1247-72ea-927b-fcc9e06602cb";
export const APPROVED = "01a1f83b-fd78-7208-974a-047e80d58d4f";
export const REVIEWED = "01a1f84c-3888-778f-8b1e-9906605976d2";
export const DENIED = "01a1f868-2f9e-750e-9e2f-f66ea8d946ca";
export const REVIEW = "01a1f84c-3888-78b6-824c-22f8b6f22b4a";
/** The org's public transparency log id: logIdFor(ORG). */
export const LOG_ID = "303271ad77cbaeda8ffbdfd95cfd8b9d";
/** The service's signing key (its RFC 7638 thumbprint). */
const KID = "hQ5n0Zq3eX1v2Yb7mWc9tRk4LpS6uJd8aFg0iHe2oTs";
const JWKS_URL = "https://risk.example.com/.well-known/jwks.json";
/** A Risk Payload, shortened: header, claims, signature. */
const JWS =
  "eyJhbGciOiJFZERTQSIsImtpZCI6ImhRNW4wWnEzZVgxdjJZYjdtV2M5dFJrNExwUzZ1SmQ4YUZnMGlIZTJvVHMiLCJ0eXAiOiJyaXNrLXBheWxvYWQrand0In0.eyJzdWIiOiIwMWExZjgzYi1mZDc4LTcyMDgtOTc0YS0wNDdlODBkNThkNGYifQ.mZ3kQv8Yt0aR5c2Lw9nB1xJpE7hUoS4dFgKiTl6VqWs";

export const hashes = {
  a: "3aeb42cca3ad6c61bcf3042640aceb885665ab7a7398bd99be1be389becffd45",
  b: "d200ae729b6801258eb636262a9fbb0183001a0cba833bae2049b6225b4af3a6",
  c: "7e082c08130f633458328a21379502da46eebad0229bbdc6aed7b536e9dca941",
  d: "ea02b31565755b37858f83054e5cbbcca22980e81fa3915c06e7019bc5fccc38",
  e: "95c5546b2e7978986c584bd101469b570224881f304e7ad77723a09f46f9b2e9",
  f: "5b8cd3ce36c172569f1fbab57e55509eb491825e9c503ba18f4854d45cf74f7d",
  g: "e744fd77a5f053cd899c0f6274962d044dff2f78adbde46f814c9ee39593f94f",
  h: "152df1b3dc52d0ae72074c7abc6df97dd4d2ac178b225aba5acc9654149cc18b",
};

/** A list page of `data`; `next` is the cursor of the next page, if there is one. */
export function list<T>(data: T[], next: string | null = null) {
  return { object: "list", data, has_more: next !== null, next_cursor: next };
}

/** A place in the org's first status list (`GET /v1/status-lists/{id}`). */
export function statusList(idx: number) {
  return { idx, uri: `https://risk.example.com/v1/status-lists/${LOG_ID}.0` };
}

export const riskPayload = { jws: JWS, kid: KID, alg: "EdDSA", verify_url: JWKS_URL };
export const ownerParty = { type: "user", id: OWNER };
