/**
 * bench:ledger tells the org of each SQL request by the statement that sets `app.org_id`
 * (scripts/bench/ledger-wire.ts): written with the setting's name in its text, or as the Worker
 * renders every setting once, with the name as the first value.
 */
import { describe, expect, it } from "vitest";
import { orgSetting } from "../../scripts/bench/ledger-wire.ts";

const ORG = "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";

describe("bench:ledger's org of a request", () => {
  it("reads the org from either form of the setting", () => {
    expect(orgSetting("select set_config('app.org_id', $1, true)", [ORG])).toBe(ORG);
    expect(orgSetting("select set_config($1,$2,true)", ["app.org_id", ORG])).toBe(ORG);
    expect(orgSetting("select set_config( $1 , $2 , true)", ["app.org_id", ORG])).toBe(ORG);
  });

  it("takes no other setting, and no statement without values, for the org", () => {
    expect(orgSetting("select set_config($1,$2,true)", ["app.api_key_hash", "h"])).toBeUndefined();
    expect(orgSetting("select set_config('app.org_id', $1, true)", undefined)).toBeUndefined();
    expect(orgSetting("select 1", [ORG])).toBeUndefined();
  });
});
