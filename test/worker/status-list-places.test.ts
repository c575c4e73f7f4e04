import { env } from "cloudflare:test";
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { logIdFor } from "#audit/checkpoint";
import { publicBaseUrl } from "../../src/env";
import { entryPlace, placeReference } from "../../src/status-lists/indices";
import { forgetPublishedLists, STATUS_LIST_TTL_SECONDS } from "../../src/status-lists/published";
import { allowed, CAPTURE, decide, type Json, newMandate, redeem } from "./support/action";
import { call, newOrg, type TestOrg } from "./support/api";
import { assessOk, orgWithKey, payment } from "./support/assess";
import { ownerSql } from "./support/db";
import { keyPair, newAgent } from "./support/identity";
import {
  fetchedStatus,
  type Place,
  placed,
  publishedStatus,
  statusNow,
} from "./support/status-lists";

// The places of agents, agent keys and action grants in the org's own Token Status Lists
// (docs/status-lists.md, "Issued"; draft-ietf-oauth-status-list §6.2, §7.1): each record names
// its place, taken from the sequence of the ledger entry that created it, and every change of
// state reaches the list within its `ttl`.

const VALID = 0;
const INVALID = 1;
const SUSPENDED = 2;

const listUri = (orgId: string) =>
  `${publicBaseUrl(env as never)}/v1/status-lists/${logIdFor(orgId)}.0`;

/** The place the entry of this type and subject gives (slot 2s), read from the ledger. */
async function placeOfEntry(orgId: string, type: string, subjectId: string): Promise<Place> {
  const [entry] = await ownerSql`select sequence from audit_entries
    where org_id = ${orgId} and type = ${type} and subject_id = ${subjectId}`;
  const place = entryPlace(env as never, orgId, Number(entry?.sequence));
  return placeReference(env as never, orgId, place);
}

async function registered(org: TestOrg, agentId: string): Promise<Json> {
  const res = await call(`/v1/agents/${agentId}/keys`, {
    method: "POST",
    token: org.token,
    body: { jwk: (await keyPair()).publicJwk },
  });
  expect(res.status).toBe(201);
  return res.json;
}

function setStatus(org: TestOrg, agentId: string, status: "active" | "suspended" | "revoked") {
  return call(`/v1/agents/${agentId}`, { method: "PATCH", token: org.token, body: { status } });
}

/** Reads at t0 (VALID), changes, then reads at t0 + 1 s (the kept list) and t0 + ttl. */
async function changedWithinTtl(
  place: Place | null | undefined,
  change: () => Promise<void>,
  to: number,
) {
  forgetPublishedLists();
  const t0 = Date.now();
  expect(await publishedStatus(place, t0)).toBe(VALID);
  await change();
  expect(await publishedStatus(place, t0 + 1000)).toBe(VALID);
  expect(await publishedStatus(place, t0 + STATUS_LIST_TTL_SECONDS * 1000)).toBe(to);
}

describe("an agent key's place", () => {
  it("is named by its record, from its registration's entry, VALID in the published list", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const key = await registered(org, agent.id);
    const place = await placeOfEntry(org.id, "agent_key.registered", agent.id);
    expect(key.status_list).toEqual(place);
    expect(place.uri).toBe(listUri(org.id));
    const listed = await call(`/v1/agents/${agent.id}/keys`, { token: org.token });
    expect(listed.json.data).toEqual([key]);
    expect(await fetchedStatus(place)).toBe(VALID);
  });

  it("turns INVALID when the key is revoked, in the list within its ttl", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const key = await registered(org, agent.id);
    let revoked: Json = {};
    await changedWithinTtl(
      key.status_list,
      async () => {
        const res = await call(`/v1/agents/${agent.id}/keys/${key.id}/revoke`, {
          method: "POST",
          token: org.token,
        });
        expect(res.status).toBe(200);
        revoked = res.json;
      },
      INVALID,
    );
    expect(revoked).toMatchObject({ status: "revoked", status_list: key.status_list });
    const [entry] = await ownerSql`select status, subject_type, subject_id
      from status_list_entries where org_id = ${org.id} and idx = ${key.status_list.idx}`;
    expect(entry).toEqual({ status: INVALID, subject_type: "agent_key", subject_id: key.id });
  });

  it("is null for a key stored before places existed, and nothing is published for it", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const pair = await keyPair();
    await ownerSql`insert into agent_keys (org_id, thumbprint, agent_id, jwk, kty, crv, alg)
      values (${org.id}, ${pair.kid}, ${agent.id}, ${JSON.stringify(pair.publicJwk)}::jsonb,
              'OKP', 'Ed25519', 'EdDSA')`;
    const listed = await call(`/v1/agents/${agent.id}/keys`, { token: org.token });
    expect(listed.json.data).toMatchObject([{ id: pair.kid, status_list: null }]);
    const res = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(res.json).toMatchObject({ status: "revoked", status_list: null });
    expect(await ownerSql`select 1 from status_list_entries where org_id = ${org.id}`).toEqual([]);
  });
});

describe("an agent's place", () => {
  it("is named by its record, from its creation's entry", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    expect(agent.status_list).toEqual(await placeOfEntry(org.id, "agent.created", agent.id));
    const read = await call(`/v1/agents/${agent.id}`, { token: org.token });
    expect(read.json.status_list).toEqual(agent.status_list);
    const listed = await call(`/v1/agents?limit=10`, { token: org.token });
    expect(listed.json.data).toEqual([read.json]);
    expect(await fetchedStatus(agent.status_list)).toBe(VALID);
  });

  it("turns INVALID when the agent is revoked, its keys' and grants' with it, within the ttl", async () => {
    const org = await newOrg();
    const { executor, mandate, decision } = await allowed(org);
    const agentId = mandate.agent_id as string;
    const key = await registered(org, agentId);
    const agent = (await call(`/v1/agents/${agentId}`, { token: org.token })).json;
    const places = [agent.status_list, key.status_list, decision.grant!.status_list];
    forgetPublishedLists();
    const t0 = Date.now();
    for (const place of places) expect(await publishedStatus(place, t0)).toBe(VALID);
    const res = await setStatus(org, agentId, "revoked");
    expect(res.status).toBe(200);
    expect(res.json.status_list).toEqual(agent.status_list);
    for (const place of places) expect(await publishedStatus(place, t0 + 1000)).toBe(VALID);
    const later = t0 + STATUS_LIST_TTL_SECONDS * 1000;
    for (const place of places) expect(await publishedStatus(place, later)).toBe(INVALID);
    // The key's record keeps its own state: revoking an agent never changed its keys.
    const keys = await call(`/v1/agents/${agentId}/keys`, { token: org.token });
    expect(keys.json.data[0]).toMatchObject({ status: "active", status_list: key.status_list });
    // And the grant no longer redeems, as the list says.
    expect((await redeem(executor.key, { grant: decision.grant!.jws, ...CAPTURE })).status).toBe(
      409,
    );
  });

  it("is SUSPENDED while the agent is suspended, its keys' and grants' too, VALID once reactivated", async () => {
    const org = await newOrg();
    const { mandate, decision } = await allowed(org);
    const agentId = mandate.agent_id as string;
    const key = await registered(org, agentId);
    const agent = (await call(`/v1/agents/${agentId}`, { token: org.token })).json;
    const places = [agent.status_list, key.status_list, decision.grant!.status_list];
    expect((await setStatus(org, agentId, "suspended")).status).toBe(200);
    for (const place of places) expect(await statusNow(place)).toBe(SUSPENDED);
    // A key registered while the agent is suspended starts suspended.
    const late = await registered(org, agentId);
    expect(await statusNow(late.status_list)).toBe(SUSPENDED);
    expect((await setStatus(org, agentId, "active")).status).toBe(200);
    for (const place of [...places, late.status_list]) {
      expect(await statusNow(place)).toBe(VALID);
    }
    // A revoked key stays INVALID whatever its agent does next.
    await call(`/v1/agents/${agentId}/keys/${late.id}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect((await setStatus(org, agentId, "suspended")).status).toBe(200);
    expect((await setStatus(org, agentId, "active")).status).toBe(200);
    expect(await statusNow(late.status_list)).toBe(INVALID);
    expect(await statusNow(key.status_list)).toBe(VALID);
  });
});

describe("an action grant's place", () => {
  it("is the JWS's status claim and its record's, from the decision's entry; the JWS verifies with the key set", async () => {
    const org = await newOrg();
    const { decision, grant } = await allowed(org);
    const place = await placeOfEntry(org.id, "action_decision.created", decision.id);
    expect(decision.grant!.status_list).toEqual(place);
    expect(place.uri).toBe(listUri(org.id));
    const keys = (await call("/.well-known/jwks.json")).json as JSONWebKeySet;
    const { payload, protectedHeader } = await jwtVerify(grant, createLocalJWKSet(keys), {
      typ: "action-grant+jwt",
      algorithms: ["EdDSA"],
    });
    expect(protectedHeader.typ).toBe("action-grant+jwt");
    expect(payload.status).toEqual({ status_list: place });
    const read = await call(`/v1/action-decisions/${decision.id}`, { token: org.token });
    expect(read.json.grant).toEqual(decision.grant);
    expect(await fetchedStatus(place)).toBe(VALID);
  });

  it("turns INVALID when the grant is redeemed (single use), within the ttl", async () => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    await changedWithinTtl(
      decision.grant!.status_list,
      async () => {
        expect((await redeem(executor.key, { grant, ...CAPTURE })).status).toBe(200);
      },
      INVALID,
    );
  });

  it("turns INVALID when its mandate is revoked, within the ttl; the mandate's other grants too", async () => {
    const org = await newOrg();
    const { key, executor, mandate, decision } = await allowed(org);
    const second = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    const places = [decision.grant!.status_list, second.json.grant!.status_list];
    forgetPublishedLists();
    const t0 = Date.now();
    for (const place of places) expect(await publishedStatus(place, t0)).toBe(VALID);
    const res = await call(`/v1/action-mandates/${mandate.id}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(res.status).toBe(200);
    const later = t0 + STATUS_LIST_TTL_SECONDS * 1000;
    for (const place of places) expect(await publishedStatus(place, later)).toBe(INVALID);
  });

  it("a decision without a grant has no place", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:write", "assess:read"]);
    const mandate = await newMandate(org);
    const res = await decide(key, mandate.id, { ...CAPTURE, grant: false });
    expect(res.json).toMatchObject({ decision: "ALLOW", grant: null });
    const [row] = await ownerSql`select status_list, status_idx from action_decisions
      where org_id = ${org.id} and id = ${res.json.id}`;
    expect(row).toEqual({ status_list: null, status_idx: null });
  });
});

describe("places", () => {
  it("no two things of an org share a place: verdicts, agents, keys, grants", async () => {
    const { org, key } = await orgWithKey();
    const places: (Place | null | undefined)[] = [];
    for (let i = 0; i < 2; i++) {
      const verdict = await assessOk(key, { mandate: payment() });
      const claims = decodeJwt(verdict.outcome.risk_payload.jws) as Json;
      places.push(claims.status.status_list);
    }
    const { mandate, decision } = await allowed(org);
    places.push(decision.grant!.status_list);
    const agent = (await call(`/v1/agents/${mandate.agent_id}`, { token: org.token })).json;
    places.push(agent.status_list);
    const other = await newAgent(org);
    places.push(other.status_list);
    for (const agentId of [agent.id, other.id, other.id]) {
      places.push((await registered(org, agentId)).status_list);
    }
    expect(places.every((p) => placed(p).uri === listUri(org.id))).toBe(true);
    expect(new Set(places.map((p) => placed(p).idx)).size).toBe(places.length);
  });

  it("are in each org's own list, at indices its own key permutes", async () => {
    const [a, b] = [await newOrg(), await newOrg()];
    const [agentA, agentB] = [await newAgent(a), await newAgent(b)];
    expect(placed(agentA.status_list).uri).toBe(listUri(a.id));
    expect(placed(agentB.status_list).uri).toBe(listUri(b.id));
    // The same sequences take other indices in another org (unpredictable across orgs).
    const indices = (orgId: string) =>
      Array.from({ length: 16 }, (_, s) => entryPlace(env as never, orgId, s + 1).idx);
    expect(indices(a.id)).not.toEqual(indices(b.id));
    // A place of one org's list says nothing in another's.
    expect(await statusNow(agentA.status_list)).toBe(VALID);
  });
});
