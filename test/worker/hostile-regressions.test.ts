import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { refusedBody } from "./support/errors";

// Each 5xx the hostile-input suite (hostile-inputs-*.test.ts) found, pinned by its own test.

describe("5xx found by the hostile-input suite", () => {
  it("GET /v1/evals with a filter that is no uuid: 400 to its caller, 401 to a bad key", async () => {
    const org = await newOrg();
    const { key } = await org.key(["policy:read"]);
    for (const query of ["eval_set_id=", "eval_set_id=not-a-uuid", "policy_id=sha256%3Axyz"]) {
      const res = await call(`/v1/evals?${query}`, { key });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
      const refused = await call(`/v1/evals?${query}`, { key: `aar_live_${"A".repeat(43)}` });
      expect(refused.status).toBe(401);
      expect(refused.error).toEqual(refusedBody("unknown_key"));
    }
  });
});
