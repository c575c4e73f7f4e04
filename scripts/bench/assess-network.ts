/**
 * `npm run bench:assess -- --network`: the bench org consumes network signals (issue 41) in
 * both modes, and three other orgs contributed, today, about every payee the bodies name
 * (assess-mandates.ts), every agent's key and the credential issuer's key: every assessment's
 * context read then finds counts above k for what it asks, as a consuming org's would. The
 * counts are payments seen and legitimate labels, never fraud: no network signal fires, so the
 * decisions (and the CPU of each) stay those of a run without the network, and the difference
 * is the cost of asking. Written as the owner through the functions the Worker's contribution
 * consumer calls, each in its org's scope.
 */
import type { NeonQueryFunction } from "@neondatabase/serverless";
import { calculateJwkThumbprint } from "jose";
import { payloadDigest } from "../../packages/client/src/audit/digest.ts";
import { type NetworkKind, networkDigest, networkKeys } from "../../src/network/keys.ts";
import { MERCHANTS } from "./assess-mandates.ts";
import type { Tenant } from "./assess-tenant.ts";

type Owner = NeonQueryFunction<false, false>;

const OTHER_ORGS = 3;

/** Sets the network up for `tenant` under the Worker's NETWORK_KEYS; answers what it did. */
export async function setUpNetwork(
  owner: Owner,
  tenant: Tenant,
  keysJson: string,
): Promise<string> {
  const key = networkKeys({ NETWORK_KEYS: keysJson })?.[0];
  if (!key) throw new Error("--network: the Worker's NETWORK_KEYS are missing or unusable");
  await owner.transaction((sql) => [
    sql`select set_config('app.org_id', ${tenant.orgId}, true)`,
    sql`select network_settings_write(true, true, true)`,
    sql`select network_settings_write(false, true, true)`,
  ]);
  const identifiers: [NetworkKind, string][] = [
    ...MERCHANTS.map((m) => ["payee", payloadDigest(m.id)] as [NetworkKind, string]),
    ...(await Promise.all(
      tenant.agents.map(
        async (a) => ["agent_key", await calculateJwkThumbprint(a.jwk)] as [NetworkKind, string],
      ),
    )),
    ["issuer", await calculateJwkThumbprint(withoutKid(tenant.consent.issuer))],
  ];
  const day = new Date().toISOString().slice(0, 10);
  for (let n = 0; n < OTHER_ORGS; n++) {
    const user = crypto.randomUUID();
    const org = crypto.randomUUID();
    await owner`insert into users (id, idp_subject) values (${user}, ${`bench-network-${user}`})`;
    await owner`insert into organizations (id, name, founder_user_id)
                values (${org}, ${`Network org ${n + 1}`}, ${user})`;
    const rows = identifiers.map(([kind, value], i) => ({
      kind,
      key_id: key.kid,
      digest: networkDigest(key, kind, value),
      day,
      seen: true,
      fraud: false,
      legitimate: n === 2 || i % 3 === 0,
    }));
    await owner.transaction((sql) => [
      sql`select set_config('app.org_id', ${org}, true)`,
      sql`select network_settings_write(true, true, false)`,
      sql`select network_settings_write(false, true, false)`,
      sql`select network_contribute(true, ${JSON.stringify(rows)}::json, null, null)`,
      sql`select network_contribute(false, ${JSON.stringify(rows)}::json, null, null)`,
    ]);
  }
  return (
    `network: the org consumes in both modes; ${OTHER_ORGS} other orgs contributed ` +
    `${identifiers.length} identifiers each (${MERCHANTS.length} payees, ` +
    `${tenant.agents.length} agent key(s), 1 issuer key), labelled legitimate, never fraud`
  );
}

function withoutKid(jwk: Record<string, unknown>) {
  const { kid: _kid, ...rest } = jwk;
  return rest as Parameters<typeof calculateJwkThumbprint>[0];
}
