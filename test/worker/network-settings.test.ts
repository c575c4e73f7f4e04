import { describe, expect, it } from "vitest";
import { call, newOrg, type TestOrg } from "./support/api";
import { addMember, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// GET and POST /v1/network-settings (docs/network.md, "Joining and leaving"): per org and mode,
// off by default, read by every member, changed by owners and admins only, in the ledger.

const OFF = {
  object: "network_settings",
  contribute: false,
  consume: false,
  excluded: false,
  contributed_through: null,
};

/**
 * The settings without `contributed_through`, which the Queue consumer moves on its own time once
 * the mode contributes (network-contributions tests its value): two reads compare by the rest.
 */
function chosen(json: Record<string, unknown>) {
  const { contributed_through: _, ...rest } = json;
  return rest;
}

function settings(org: TestOrg, mode: "live" | "test" = "live", token = org.token) {
  return call("/v1/network-settings", { token, headers: { "x-mode": mode } });
}

function change(
  org: TestOrg,
  body: { contribute: boolean; consume: boolean },
  options: { mode?: "live" | "test"; token?: string; headers?: Record<string, string> } = {},
) {
  return call("/v1/network-settings", {
    method: "POST",
    token: options.token ?? org.token,
    headers: { "x-mode": options.mode ?? "live", ...options.headers },
    body,
  });
}

describe("network settings", () => {
  it("are off in both modes until set, and set per mode, in the ledger", async () => {
    const org = await newOrg();
    expect((await settings(org)).json).toEqual({ ...OFF, livemode: true, updated_at: null });
    expect((await settings(org, "test")).json).toEqual({
      ...OFF,
      livemode: false,
      updated_at: null,
    });

    const before = Date.now();
    const joined = await change(org, { contribute: true, consume: true });
    expect(joined.status).toBe(200);
    expect(joined.json).toEqual({
      ...OFF,
      livemode: true,
      contribute: true,
      consume: true,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(joined.json.updated_at as string)).toBeGreaterThanOrEqual(before - 1000);
    expect(chosen((await settings(org)).json)).toEqual(chosen(joined.json));
    // The other mode is another membership.
    expect((await settings(org, "test")).json).toEqual({
      ...OFF,
      livemode: false,
      updated_at: null,
    });

    const test = await change(org, { contribute: true, consume: false }, { mode: "test" });
    expect(test.json).toMatchObject({ livemode: false, contribute: true, consume: false });
    const left = await change(org, { contribute: false, consume: false });
    expect(left.json).toMatchObject({ livemode: true, contribute: false, consume: false });
    expect((await settings(org, "test")).json).toMatchObject({ contribute: true });

    const entries = await ownerSql`select type, actor_type, subject_type, subject_id
      from audit_entries where org_id = ${org.id} and type = 'network_settings.updated'
      order by sequence`;
    expect(entries).toEqual([
      { ...entryOf(org, "live"), actor_type: "user" },
      { ...entryOf(org, "test"), actor_type: "user" },
      { ...entryOf(org, "live"), actor_type: "user" },
    ]);
  });

  it("are changed by owners and admins, read by members, and refused to API keys", async () => {
    const org = await newOrg();
    const admin = await newOrg();
    const member = await newOrg();
    await addMember(org.id, admin.subject, "admin");
    await addMember(org.id, member.subject, "member");
    const inOrg = { "x-org-id": org.id };

    const byAdmin = await change(
      org,
      { contribute: true, consume: false },
      {
        token: admin.token,
        headers: inOrg,
      },
    );
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.json).toMatchObject({ contribute: true, consume: false });
    // The admin's own org is untouched: the session acts for the org it names.
    expect((await settings(admin)).json).toMatchObject({ contribute: false });

    const read = await call("/v1/network-settings", { token: member.token, headers: inOrg });
    expect(read.status).toBe(200);
    expect(chosen(read.json)).toEqual(chosen(byAdmin.json));
    const refused = await change(
      org,
      { contribute: false, consume: false },
      {
        token: member.token,
        headers: inOrg,
      },
    );
    expect(refused.status).toBe(403);
    expect(refused.error).toEqual(errorBody("insufficient_scope", { required: "network:write" }));

    const { key } = await org.key();
    for (const method of ["GET", "POST"] as const) {
      const res = await call("/v1/network-settings", {
        method,
        key,
        raw: true,
        ...(method === "POST" ? { body: { contribute: false, consume: false } } : {}),
      });
      expect(res.status).toBe(403);
      expect(res.error).toEqual(errorBody("session_required"));
    }
    // Nothing the refusals tried changed anything.
    expect(chosen((await settings(org)).json)).toEqual(chosen(byAdmin.json));
  });

  it("refuses a bad body with the field named, and consuming without contributing", async () => {
    const org = await newOrg();
    const cases: [unknown, { path: string; message: string; code: string }[]][] = [
      [
        { contribute: false, consume: true },
        [
          {
            path: "consume",
            message:
              "an org that does not contribute does not consume: set contribute to true as well",
            code: "custom",
          },
        ],
      ],
      [
        { contribute: true },
        [
          {
            path: "consume",
            message: "Invalid input: expected boolean, received undefined",
            code: "invalid_type",
          },
        ],
      ],
      [
        { contribute: "true", consume: false },
        [
          {
            path: "contribute",
            message: "Invalid input: expected boolean, received string",
            code: "invalid_type",
          },
        ],
      ],
      [
        { contribute: true, consume: true, share: "everything" },
        [{ path: "", message: 'Unrecognized key: "share"', code: "unrecognized_keys" }],
      ],
    ];
    for (const [body, details] of cases) {
      const res = await call("/v1/network-settings", {
        method: "POST",
        token: org.token,
        raw: true,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error).toEqual(errorBody("invalid_request", details));
    }
    expect((await settings(org)).json).toEqual({ ...OFF, livemode: true, updated_at: null });
  });

  it("show an operator's exclusion, which no setting lifts", async () => {
    const org = await newOrg();
    await change(org, { contribute: true, consume: true });
    await ownerSql`update network_members set excluded_at = now(), excluded_reason = 'poisoning'
      where org_id = ${org.id} and livemode = true`;
    const again = await change(org, { contribute: true, consume: true });
    expect(again.json).toMatchObject({ contribute: true, consume: true, excluded: true });
    expect((await settings(org)).json).toMatchObject({ excluded: true });
    expect((await settings(org, "test")).json).toMatchObject({ excluded: false });
  });
});

function entryOf(org: TestOrg, mode: "live" | "test") {
  return {
    type: "network_settings.updated",
    subject_type: "network_settings",
    subject_id: `${org.id}:${mode}`,
  };
}
