import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { listReceipts, recordReceipt, toReceipt } from "../payment-receipts/receipts";
import { listOf, PageQuery } from "../schemas/common";
import { PaymentReceipt, RecordPaymentReceipt } from "../schemas/payment-receipts";

const tags = ["Assessments"];

const record = createRoute(
  guarded("assess:write", {
    method: "post",
    path: "/v1/assessments/{id}/receipts",
    tags,
    summary: "Record an AP2 Payment Receipt against an assessment, as evidence",
    description:
      "The receipt the payment's processor returned (AP2 `payment_receipt.json`), as JSON or " +
      "as the compact JWS its issuer signed. Its `reference` must be the hash of the " +
      "assessment's closed mandate when the assessment had a credential (400 " +
      "`receipt_reference_mismatch`). A signed receipt is verified with the keys of the org's " +
      "credential issuer its `iss` names: `verified`, or 400 `receipt_signature_invalid`; one " +
      "whose `iss` names no issuer, and one sent as JSON, is recorded `unverified`. One receipt " +
      "per `payment_id` and assessment: the same receipt again answers 200 with the stored " +
      "one, another is 409 `receipt_conflict`. Each is audited (`assessment.payment_receipt_" +
      'recorded`) and shown in the assessment\'s evidence (docs/credentials.md, "Payment receipts").',
    request: { params: IdParam, body: jsonBody(RecordPaymentReceipt) },
    responses: {
      201: json(PaymentReceipt, "The receipt, recorded and audited"),
      200: json(PaymentReceipt, "The same receipt was already recorded: the stored one"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  }),
);

const list = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}/receipts",
    tags,
    summary: "An assessment's Payment Receipts, newest first",
    request: { params: IdParam, query: PageQuery },
    responses: {
      200: json(listOf(PaymentReceipt, "PaymentReceiptList"), "A page of receipts"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

export function registerAssessmentsReceipts(app: OpenAPIHono<AppEnv>) {
  app.openapi(record, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const { row, created } = await recordReceipt(c.var.tenant, id, c.req.valid("json"));
    return created ? c.json(toReceipt(row), 201) : c.json(toReceipt(row), 200);
  });

  app.openapi(list, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await listReceipts(c.var.tenant, id, c.req.valid("query")), 200);
  });
}
