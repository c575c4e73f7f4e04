import type { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { commit } from "../ledger/commit";
import type { NetworkSettings, UpdateNetworkSettings } from "../schemas/network";
import { nudge } from "./queue";

// GET and POST /v1/network-settings apart from HTTP (docs/network.md, "Joining and leaving"):
// the caller's membership of the network in its request's mode, read and written only through
// the database's network_settings_* functions, which act on the org in scope and nothing else.

type NetworkSettingsView = z.infer<typeof NetworkSettings>;
type Update = z.infer<typeof UpdateNetworkSettings>;

interface StoredSettings {
  contribute: boolean;
  consume: boolean;
  excluded: boolean;
  updated_at: string | null;
  contributed_through: string | null;
}

/** The function's json, as the driver answers it: parsed already, or (over some transports) text. */
function settingsOf(result: unknown): StoredSettings {
  const value = (result as { rows: { settings: unknown }[] }).rows[0]?.settings;
  return (typeof value === "string" ? JSON.parse(value) : value) as StoredSettings;
}

function view(livemode: boolean, stored: StoredSettings): NetworkSettingsView {
  return {
    object: "network_settings",
    livemode,
    contribute: stored.contribute,
    consume: stored.consume,
    excluded: stored.excluded,
    updated_at: isoOrNull(stored.updated_at),
    contributed_through: isoOrNull(stored.contributed_through),
  };
}

function isoOrNull(value: string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}

/** The caller's settings in its mode: off until set. */
export async function readNetworkSettings(tenant: Tenant): Promise<NetworkSettingsView> {
  const livemode = tenant.livemode;
  const [result] = await tenant.batch((db) => [
    db.execute(sql`select network_settings_read(${livemode}) as settings`),
  ]);
  return view(livemode, settingsOf(result));
}

/**
 * Sets the caller's membership of its mode, with its `network_settings.updated` ledger entry in
 * the same transaction. Leaving (`contribute` false) deletes everything the org contributed in
 * that mode at once. Joining contributes the org's last 180 days soon after (a queue message,
 * not on this request's path).
 */
export async function updateNetworkSettings(
  tenant: Tenant,
  update: Update,
): Promise<NetworkSettingsView> {
  const livemode = tenant.livemode;
  const { orgId } = await tenant.caller();
  const { results } = await commit(
    tenant,
    {
      type: "network_settings.updated",
      subject: { type: "network_settings", id: `${orgId}:${livemode ? "live" : "test"}` },
      payload: { livemode, contribute: update.contribute, consume: update.consume },
    },
    (db) => [
      db.execute(
        sql`select network_settings_write(${livemode}, ${update.contribute}, ${update.consume}) as settings`,
      ),
    ],
  );
  const stored = settingsOf(results[0]);
  if (stored.contribute && !stored.excluded) {
    nudge(tenant.env, (work) => tenant.later(work), { org_id: orgId, livemode });
  }
  return view(livemode, stored);
}
