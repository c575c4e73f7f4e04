import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { describe, expect, it } from "vitest";
import { parseChain } from "../../src/ap2-credentials/chain";
import { receiptReferences } from "../../src/assess/mandate-receipt";

// A Mandate Receipt POST /v1/assess answered (test/worker/assess-mandate-receipt.test.ts, the
// vector payment_valid_basic), with the key set that verified it, and what the AP2 SDK's own
// code answered for it (scripts/ap2-sdk/verify-mandate-receipt.py; docs/credentials.md,
// "Checked by the SDK's own code").

const DIR = join(import.meta.dirname, "../fixtures/ap2-mandate-receipt");
const given = JSON.parse(readFileSync(join(DIR, "receipt.json"), "utf8")) as {
  credential: string;
  receipt: string;
  jwks: JSONWebKeySet;
};
const sdk = JSON.parse(readFileSync(join(DIR, "sdk-answer.json"), "utf8"));

describe("the Mandate Receipt the AP2 SDK verified", () => {
  it("verifies ES256 against the service's key set, as jose reads it", async () => {
    const { payload } = await compactVerify(given.receipt, createLocalJWKSet(given.jwks), {
      algorithms: ["ES256"],
    });
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual(sdk.verify_jwt);
  });

  it("verified under the SDK's ES256 step (verify_jwt), payload as signed", () => {
    expect(sdk.verify_jwt).toMatchObject({ result: "success", iss: expect.any(String) });
  });

  it("carries the SDK's canonical reference, and AP2's over the final SD-JWT", () => {
    const references = receiptReferences(parseChain(given.credential));
    expect(sdk.canonical_reference).toBe(references.closedMandateReference);
    expect(sdk.verify_jwt.closed_mandate_reference).toBe(references.closedMandateReference);
    expect(sdk.verify_jwt.reference).toBe(references.reference);
  });

  it("is refused by verify_receipt's model check only: it validates merchant and PSP receipts", () => {
    // ReceiptClient.verify_receipt model-validates the payload as a PaymentReceipt or a
    // CheckoutReceipt (status, payment_id / order_id), which a Mandate Receipt is not; its
    // signature step above passed. Recorded so a change of the SDK's behaviour shows here.
    for (const kind of ["payment", "checkout"]) {
      expect(sdk.verify_receipt[kind].error).toBe("verification_failed");
      expect(sdk.verify_receipt[kind].message).toMatch(
        /validation errors for (Payment|Checkout)Receipt/,
      );
      expect(sdk.verify_receipt[kind].message).not.toMatch(/signature/i);
    }
  });
});
