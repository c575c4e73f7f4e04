import { CompactSign, decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { b64url, newSigner, type Signer } from "../support/ap2-chains";
import { call } from "./support/api";
import { assessOk, type Json, orgWithKey } from "./support/assess";
import { provenAgentOrg, registerIssuer } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { assessOnce } from "./support/routes";

// docs/credentials.md, "Payment receipts": AP2 Payment Receipts recorded against an assessment,
// bound to its closed mandate, verified when signed by a PSP the org registered as a credential
// issuer, and kept as evidence.

const PSP = "https://psp.example";

/** An org with a proven agent, one assessment of its credential, and that mandate's references. */
async function credentialAssessment() {
  const setup = await provenAgentOrg();
  const res = await assessOk(setup.key, await setup.body());
  const claims = decodeJwt(res.mandate_receipt as string);
  return {
    ...setup,
    assessmentId: res.assessmentId as string,
    /** AP2's `reference` (the Mandate Receipt's). */
    reference: claims.reference as string,
    /** The SDK's closed mandate reference (`outcome.credential.reference`). */
    closed: res.outcome.credential?.reference as string,
  };
}

/** A Success receipt of a payment with these references, AP2's members only. */
function successReceipt(reference: string, paymentId = `pay_${crypto.randomUUID()}`) {
  return {
    status: "Success",
    iss: PSP,
    iat: Math.floor(Date.now() / 1000),
    reference,
    payment_id: paymentId,
    psp_confirmation_id: `psp_${paymentId}`,
    network_confirmation_id: `nw_${paymentId}`,
  };
}

/** The receipt as the PSP signs it: a compact JWS, ES256, the key's kid in the header. */
async function signed(signer: Signer, payload: Json, kid = signer.jwk.kid) {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "ES256", typ: "JWT", ...(kid ? { kid } : {}) })
    .sign(signer.privateKey);
}

function record(key: string, assessmentId: string, body: unknown) {
  return call(`/v1/assessments/${assessmentId}/receipts`, {
    method: "POST",
    key,
    body: body as Json,
    raw: true,
  });
}

function receipts(key: string, assessmentId: string, query: `?${string}` | "" = "") {
  return call(`/v1/assessments/${assessmentId}/receipts${query}`, { key });
}

/** What the API answers for a receipt recorded from `fields`, beside its own members. */
function recorded(assessmentId: string, fields: Json, more: Json) {
  return {
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    object: "payment_receipt",
    assessment_id: assessmentId,
    livemode: true,
    psp_confirmation_id: null,
    network_confirmation_id: null,
    error: null,
    error_description: null,
    jws: null,
    ...fields,
    created: expect.any(String),
    ...more,
  };
}

describe("POST /v1/assessments/{id}/receipts", () => {
  it("records an unsigned receipt bound to the Mandate Receipt's reference: 201, unverified, audited", async () => {
    const { org, key, assessmentId, reference } = await credentialAssessment();
    const fields = successReceipt(reference);
    const res = await record(key, assessmentId, fields);
    expect(res.status).toBe(201);
    expect(res.json).toEqual(
      recorded(assessmentId, fields, {
        verification: { status: "unverified", reason: "unsigned", issuer_id: null },
        reference_match: "reference",
      }),
    );
    const entries = await ownerSql`select type, subject_type, subject_id, actor_type
      from audit_entries where org_id = ${org.id} and type = 'assessment.payment_receipt_recorded'`;
    expect(entries).toEqual([
      {
        type: "assessment.payment_receipt_recorded",
        subject_type: "payment_receipt",
        subject_id: res.json.id,
        actor_type: "api_key",
      },
    ]);
    const [row] = await ownerSql`select r.audit_sequence, e.sequence
      from payment_receipts r join audit_entries e
        on e.org_id = r.org_id and e.id = r.audit_entry_id
      where r.id = ${res.json.id}`;
    expect(row?.audit_sequence).toBe(row?.sequence);
  });

  it("answers the same receipt again with 200 and the stored one, written once", async () => {
    const { org, key, assessmentId, reference } = await credentialAssessment();
    const fields = successReceipt(reference);
    const first = await record(key, assessmentId, fields);
    const again = await record(key, assessmentId, fields);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    const [count] = await ownerSql`select count(*)::int as n from payment_receipts
      where org_id = ${org.id}`;
    expect(count).toEqual({ n: 1 });
    const [entries] = await ownerSql`select count(*)::int as n from audit_entries
      where org_id = ${org.id} and type = 'assessment.payment_receipt_recorded'`;
    expect(entries).toEqual({ n: 1 });
  });

  it("refuses another receipt for a recorded payment_id: 409 receipt_conflict, nothing written", async () => {
    const { org, key, assessmentId, reference } = await credentialAssessment();
    const fields = successReceipt(reference);
    const first = await record(key, assessmentId, fields);
    const other = await record(key, assessmentId, {
      ...fields,
      psp_confirmation_id: "psp_someone_else",
    });
    expect(other.status).toBe(409);
    expect(other.json).toEqual(
      errorBody("receipt_conflict", [
        {
          path: "payment_id",
          message:
            `payment ${fields.payment_id} already has a receipt on this assessment ` +
            `(${first.json.id}), with other content: a recorded receipt never changes`,
        },
      ]),
    );
    const [count] = await ownerSql`select count(*)::int as n from payment_receipts
      where org_id = ${org.id}`;
    expect(count).toEqual({ n: 1 });
  });

  it("verifies a receipt signed by the PSP the org registered as a credential issuer", async () => {
    const { org, key, assessmentId, closed } = await credentialAssessment();
    const psp = await newSigner("ES256", "psp-1");
    const issuerId = await registerIssuer(org, [psp.jwk], PSP);
    // As AP2's processor samples make it: the SDK's closed mandate reference.
    const fields = successReceipt(closed);
    const jws = await signed(psp, fields);
    const res = await record(key, assessmentId, { jws });
    expect(res.status).toBe(201);
    expect(res.json).toEqual(
      recorded(assessmentId, fields, {
        jws,
        verification: { status: "verified", reason: "issuer_signature", issuer_id: issuerId },
        reference_match: "closed_mandate_reference",
      }),
    );
    // The same receipt signed again (a new ECDSA signature) is the same receipt.
    const again = await record(key, assessmentId, { jws: await signed(psp, fields) });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
  });

  it("takes the issuer's id for iss as well as its name, and an EdDSA key", async () => {
    const { org, key, assessmentId, reference } = await credentialAssessment();
    const psp = await newSigner("EdDSA");
    const issuerId = await registerIssuer(org, [psp.jwk], "Acme PSP");
    const fields = { ...successReceipt(reference), iss: issuerId };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(fields)))
      .setProtectedHeader({ alg: "EdDSA" })
      .sign(psp.privateKey);
    const res = await record(key, assessmentId, { jws });
    expect(res.status).toBe(201);
    expect(res.json.verification).toEqual({
      status: "verified",
      reason: "issuer_signature",
      issuer_id: issuerId,
    });
  });

  it("refuses a receipt no key of the issuer it names verifies: 400 receipt_signature_invalid", async () => {
    const { org, key, assessmentId, reference } = await credentialAssessment();
    const psp = await newSigner("ES256", "psp-1");
    const issuerId = await registerIssuer(org, [psp.jwk], PSP);
    const forger = await newSigner("ES256", "psp-1");
    const forged = await record(key, assessmentId, {
      jws: await signed(forger, successReceipt(reference)),
    });
    const details = [
      {
        path: "jws",
        message: `no key with kid "psp-1" of the credential issuer ${issuerId} (named by iss "${PSP}") verifies the receipt`,
      },
    ];
    expect(forged.status).toBe(400);
    expect(forged.json).toEqual(errorBody("receipt_signature_invalid", details));
    // The PSP's own signature over other bytes: a payload changed after signing.
    const genuine = (await signed(psp, successReceipt(reference))).split(".");
    const altered = b64url(
      JSON.stringify({ ...successReceipt(reference), payment_id: "pay_altered" }),
    );
    const tampered = await record(key, assessmentId, {
      jws: `${genuine[0]}.${altered}.${genuine[2]}`,
    });
    expect(tampered.status).toBe(400);
    expect(tampered.json).toEqual(errorBody("receipt_signature_invalid", details));
    const [count] = await ownerSql`select count(*)::int as n from payment_receipts
      where org_id = ${org.id}`;
    expect(count).toEqual({ n: 0 });
  });

  it("records a receipt signed by an issuer the org does not know as unverified", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const stranger = await newSigner("ES256", "k-1");
    const fields = { ...successReceipt(reference), iss: "https://unknown-psp.example" };
    const jws = await signed(stranger, fields);
    const res = await record(key, assessmentId, { jws });
    expect(res.status).toBe(201);
    expect(res.json).toEqual(
      recorded(assessmentId, fields, {
        jws,
        verification: { status: "unverified", reason: "unknown_issuer", issuer_id: null },
        reference_match: "reference",
      }),
    );
  });

  it("refuses a reference that is not the assessment's closed mandate: 400 naming both", async () => {
    const { key, assessmentId, reference, closed } = await credentialAssessment();
    const message =
      `is not the hash of this assessment's closed mandate: expected ${reference} ` +
      `(reference, AP2) or ${closed} (closed_mandate_reference, the SDK's)`;
    const other = "x".repeat(43);
    const res = await record(key, assessmentId, successReceipt(other));
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("receipt_reference_mismatch", [{ path: "reference", message }]),
    );
    const stranger = await newSigner("ES256");
    const signedRes = await record(key, assessmentId, {
      jws: await signed(stranger, successReceipt(other)),
    });
    expect(signedRes.status).toBe(400);
    expect(signedRes.json).toEqual(
      errorBody("receipt_reference_mismatch", [{ path: "jws.payload.reference", message }]),
    );
  });

  it("binds nothing for an assessment made without a credential: any reference, reference_match null", async () => {
    const { org, key } = await orgWithKey();
    const { assessmentId } = await assessOnce(org);
    const fields = successReceipt("any-hash-the-psp-computed");
    const res = await record(key, assessmentId, fields);
    expect(res.status).toBe(201);
    expect(res.json.reference_match).toBeNull();
  });

  it("takes an Error receipt with its error members, and holds AP2's rules for each status", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const error = {
      status: "Error",
      iss: PSP,
      iat: 1795166071,
      reference,
      payment_id: "pay_declined",
      error: "card_declined",
      error_description: "The issuer declined the card.",
    };
    const res = await record(key, assessmentId, error);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ ...error, psp_confirmation_id: null });

    const bad = await record(key, assessmentId, {
      status: "Success",
      iss: PSP,
      iat: 1795166071,
      reference,
      payment_id: "pay_x",
      error: "card_declined",
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual(
      errorBody("invalid_request", [
        { path: "psp_confirmation_id", message: "required", code: "custom" },
        { path: "network_confirmation_id", message: "required", code: "custom" },
        { path: "error", message: "not allowed when status is Success", code: "custom" },
      ]),
    );
  });

  it("refuses what is not a receipt: missing members, an unknown one, jws beside members, a bad payload", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const missing = await record(key, assessmentId, { status: "Success", iss: PSP });
    expect(missing.status).toBe(400);
    expect(missing.error.details.map((d: Json) => d.path)).toEqual([
      "iat",
      "reference",
      "payment_id",
      "psp_confirmation_id",
      "network_confirmation_id",
    ]);
    const unknown = await record(key, assessmentId, { ...successReceipt(reference), amount: 5 });
    expect(unknown.status).toBe(400);
    expect(unknown.error.details).toEqual([
      { path: "", message: 'Unrecognized key: "amount"', code: "unrecognized_keys" },
    ]);
    const psp = await newSigner("ES256");
    const jws = await signed(psp, successReceipt(reference));
    const both = await record(key, assessmentId, { jws, payment_id: "pay_1" });
    expect(both.status).toBe(400);
    expect(both.error.details).toEqual([
      {
        path: "payment_id",
        message: "a signed receipt is sent as jws alone: its members are the JWS payload",
        code: "custom",
      },
    ]);
    const payload = await record(key, assessmentId, {
      jws: await signed(psp, { ...successReceipt(reference), status: "Done" }),
    });
    expect(payload.status).toBe(400);
    expect(payload.error.details.map((d: Json) => d.path)).toEqual(["jws.payload.status"]);
    const garbage = await record(key, assessmentId, { jws: "e30.bm90IGpzb24.c2ln" });
    expect(garbage.status).toBe(400);
    expect(garbage.json).toEqual(
      errorBody("invalid_request", [
        { path: "jws", message: "the JWS payload is not a JSON object" },
      ]),
    );
  });

  it("answers 404 for an unknown assessment, another org's, and the other mode's", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const fields = successReceipt(reference);
    const unknown = await record(key, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", fields);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual(errorBody("not_found"));
    const other = await orgWithKey();
    const crossed = await record(other.key, assessmentId, fields);
    expect(crossed.status).toBe(404);
    expect(crossed.json).toEqual(errorBody("not_found"));
    expect((await receipts(other.key, assessmentId)).status).toBe(404);
    const test = await orgWithKey("test");
    const testAssessment = await assessOnce(test.org, test.key);
    const live = await test.org.key(undefined, "live");
    const mode = await record(live.key, testAssessment.assessmentId, fields);
    expect(mode.status).toBe(404);
  });
});

describe("GET /v1/assessments/{id}/receipts", () => {
  it("lists an assessment's receipts newest first, a page at a time", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await record(key, assessmentId, successReceipt(reference, `pay_${i}`));
      ids.push(res.json.id);
    }
    const first = await receipts(key, assessmentId, "?limit=2");
    expect(first.status).toBe(200);
    expect(first.json.data.map((r: Json) => r.payment_id)).toEqual(["pay_2", "pay_1"]);
    expect(first.json).toMatchObject({ object: "list", has_more: true });
    const next = await receipts(key, assessmentId, `?limit=2&cursor=${first.json.next_cursor}`);
    expect(next.json).toEqual({
      object: "list",
      data: [expect.objectContaining({ id: ids[0], payment_id: "pay_0" })],
      has_more: false,
      next_cursor: null,
    });
    const bad = await receipts(key, assessmentId, "?cursor=nope");
    expect(bad.status).toBe(400);
    expect(bad.error).toEqual(
      errorBody("invalid_cursor", [{ path: "cursor", message: "not a cursor from this API" }]),
    );
  });

  it("answers an empty list for an assessment without receipts, and 404 for an unknown one", async () => {
    const { org, key } = await orgWithKey();
    const { assessmentId } = await assessOnce(org);
    expect((await receipts(key, assessmentId)).json).toEqual({
      object: "list",
      data: [],
      has_more: false,
      next_cursor: null,
    });
    const unknown = await receipts(key, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e");
    expect(unknown.status).toBe(404);
  });
});

describe("the assessment's evidence", () => {
  it("keeps its receipts, oldest first, as the receipts route shows them", async () => {
    const { key, assessmentId, reference } = await credentialAssessment();
    const first = await record(key, assessmentId, successReceipt(reference, "pay_a"));
    const second = await record(key, assessmentId, successReceipt(reference, "pay_b"));
    const evidence = await call(`/v1/assessments/${assessmentId}/evidence`, { key });
    expect(evidence.status).toBe(200);
    expect(evidence.json.payment_receipts).toEqual([first.json, second.json]);
  });
});
