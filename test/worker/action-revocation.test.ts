import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import { CAPTURE, decide, type Json, newMandate, redeem } from "./support/action";
import { call, newOrg, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// Issue 17, item 6c: a mandate's (or its agent's) revocation and its grants' redemptions are
// ordered by the org's ledger object. Once the revoke answers 200 no grant under it redeems.

function revoke(org: TestOrg, mandateId: string) {
  return call(`/v1/action-mandates/${mandateId}/revoke`, { method: "POST", token: org.token });
}

/** The ledger sequence of the mandate's `action_mandate.revoked` entry. */
async function revocationSequence(orgId: string, mandateId: string): Promise<number> {
  const rows = await ownerSql`select sequence from audit_entries where org_id = ${orgId}
    and type = 'action_mandate.revoked' and subject_id = ${mandateId}`;
  expect(rows).toHaveLength(1);
  return Number(rows[0]?.sequence);
}

async function storedRedemptions(orgId: string) {
  const rows = await ownerSql`select r.grant_id, r.audit_sequence from action_redemptions r
    where r.org_id = ${orgId} order by r.audit_sequence`;
  const entries = await ownerSql`select subject_id, sequence from audit_entries
    where org_id = ${orgId} and type = 'action_grant.redeemed' order by sequence`;
  return { rows, entries };
}

/** A mandate with `count` ALLOWs, each with a grant for one executor. */
async function grantsUnderOneMandate(org: TestOrg, count: number) {
  const { key } = await org.key(["assess:write", "assess:read"]);
  const executor = await org.key(["assess:write"]);
  const mandate = await newMandate(org, {
    max_uses: count,
    max_amount_per_use: undefined,
    max_amount_total: undefined,
    currency: undefined,
  });
  const grants: string[] = [];
  let decision: Json = {};
  for (let i = 0; i < count; i++) {
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(res.json.decision).toBe("ALLOW");
    grants.push(res.json.grant!.jws);
    decision = res.json;
  }
  return { executor, mandate, grants, decision };
}

describe("revoking an action mandate while its grants are being redeemed", () => {
  it("refuses a redemption that read the mandate as active before the revoke committed", async () => {
    const org = await newOrg();
    const { executor, mandate, grants } = await grantsUnderOneMandate(org, 1);
    const revoked = await revoke(org, mandate.id);
    expect(revoked.status).toBe(200);
    // The redemption's first read saw the mandate before the revoke's update committed:
    // put the database back as that read saw it. Only the ledger object can now refuse it.
    await ownerSql`update action_mandates set status = 'active', revoked_at = null
      where id = ${mandate.id}`;
    const res = await redeem(executor.key, { grant: grants[0]!, ...CAPTURE });
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("mandate_revoked", [
        {
          path: "grant",
          message: `the mandate ${mandate.id} was revoked at ${revoked.json.revoked_at}`,
        },
      ]),
    );
    expect(await storedRedemptions(org.id)).toEqual({ rows: [], entries: [] });
  });

  it("an agent's revocation voids its grants in the ledger object before it answers 200", async () => {
    const org = await newOrg();
    const { executor, mandate, decision } = await grantsUnderOneMandate(org, 1);
    const revoked = await call(`/v1/agents/${mandate.agent_id}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "revoked" },
    });
    expect(revoked.status).toBe(200);
    // The database refuses to un-revoke an agent (revocation is terminal), so the stale read
    // cannot be staged as for a mandate: ask the ledger object what a redemption that read the
    // agent as active before the revocation would be told.
    const answer = await ledgerOf(env, org.id).appendDeferred(
      org.id,
      {
        type: "action_grant.redeemed",
        actor: { type: "api_key", id: executor.id },
        subject: { type: "action_grant", id: decision.grant.id },
        digest: `sha256:${"ab".repeat(32)}`,
        once: [`grant:${decision.grant.id}`],
        attachment: "{}",
      },
      {
        kind: "unless_voided",
        voidedBy: [`action_mandate:${mandate.id}`, `agent:${mandate.agent_id}`],
      },
    );
    const cut = await ownerSql`select sequence from audit_entries where org_id = ${org.id}
      and type = 'agent.revoked' and subject_id = ${mandate.agent_id}`;
    expect(answer).toEqual({
      voided: {
        key: `agent:${mandate.agent_id}`,
        sequence: Number(cut[0]?.sequence),
        at: revoked.json.revoked_at,
      },
    });
    expect(await storedRedemptions(org.id)).toEqual({ rows: [], entries: [] });
  });

  it("a repeated revoke keeps the first revocation: same entry, same time, grants still void", async () => {
    const org = await newOrg();
    const { executor, mandate, grants } = await grantsUnderOneMandate(org, 1);
    const first = await revoke(org, mandate.id);
    const again = await revoke(org, mandate.id);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    await revocationSequence(org.id, mandate.id);
    await ownerSql`update action_mandates set status = 'active', revoked_at = null
      where id = ${mandate.id}`;
    const res = await redeem(executor.key, { grant: grants[0]!, ...CAPTURE });
    expect(res.error.details[0].message).toBe(
      `the mandate ${mandate.id} was revoked at ${first.json.revoked_at}`,
    );
  });

  it("orders 40 racing redemptions around the revoke: each 200 before it in the ledger, every later one refused", async () => {
    const org = await newOrg();
    const { executor, mandate, grants } = await grantsUnderOneMandate(org, 50);
    const attempt = (grant: string) => redeem(executor.key, { grant, ...CAPTURE });
    // Redemptions in flight on both sides of the revoke, then more once it has answered.
    const before = grants.slice(0, 20).map(attempt);
    // Once the first of them has answered, so the revoke lands among the others.
    await Promise.race(before);
    const revoking = revoke(org, mandate.id);
    const during = grants.slice(20, 40).map(attempt);
    const revoked = await revoking;
    expect(revoked.status).toBe(200);
    const after = await Promise.all(grants.slice(40).map(attempt));
    const racing = await Promise.all([...before, ...during]);

    const cut = await revocationSequence(org.id, mandate.id);
    const won = racing.filter((r) => r.status === 200);
    expect(won.length).toBeGreaterThan(0);
    for (const answer of won) expect(answer.json.audit.sequence).toBeLessThan(cut);
    for (const answer of [...racing, ...after].filter((r) => r.status !== 200)) {
      expect(answer.status).toBe(409);
      expect(answer.error.error).toBe("mandate_revoked");
    }
    for (const answer of after) expect(answer.status).toBe(409);
    // What is stored agrees: exactly the 200s, all sequenced before the revocation.
    const { rows, entries } = await storedRedemptions(org.id);
    expect(rows.map((r) => Number(r.audit_sequence)).sort()).toEqual(
      won.map((r) => r.json.audit.sequence).sort(),
    );
    expect(entries.every((e) => Number(e.sequence) < cut)).toBe(true);
    expect(entries).toHaveLength(won.length);
    console.log(`race: ${won.length} redeemed before the revocation, ${50 - won.length} refused`);
  });
});
