import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { assessWith, countRows, orgWithKey, payment } from "./support/assess";
import { errorBody } from "./support/errors";

// docs/latency.md (Placement): LEDGER_LOCATION_HINT places new org ledger objects next to the
// database. Miniflare runs every object locally whatever the hint, so these tests check what
// the Worker does with the variable: a documented hint reaches `get` and the path works, a
// misspelt one fails closed (503, never approve, nothing stored).

describe("LEDGER_LOCATION_HINT", () => {
  it("wrangler.toml sets a documented hint, and the tests run with it", () => {
    expect(env.LEDGER_LOCATION_HINT).toBe("enam");
  });

  it.each(["weur", "apac", "oc", " enam ", ""])(
    "with %j, an assessment is sequenced and stored",
    async (hint) => {
      const { org, key } = await orgWithKey();
      const res = await assessWith({ LEDGER_LOCATION_HINT: hint }, key, { mandate: payment() });
      expect(res.status).toBe(200);
      expect(await countRows(org.id)).toMatchObject({ assessments: 1, ledger: 1 });
    },
  );

  it.each(["us-east-1", "ENAM", "eu"])(
    "with %j, not one of Cloudflare's hints, assess answers 503 and stores nothing",
    async (hint) => {
      const { org, key } = await orgWithKey();
      const res = await assessWith({ LEDGER_LOCATION_HINT: hint }, key, { mandate: payment() });
      expect(res.status).toBe(503);
      expect(res.json).toEqual(errorBody("ledger_unavailable"));
      expect(res.text).not.toContain("approve");
      expect(await countRows(org.id)).toMatchObject({ assessments: 0, ledger: 0 });
    },
  );
});
