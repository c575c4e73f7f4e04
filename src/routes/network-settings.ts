import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { readNetworkSettings, updateNetworkSettings } from "../network/settings";
import { NetworkSettings, networkTags as tags, UpdateNetworkSettings } from "../schemas/network";

const SHARED =
  "Only keyed digests of identifiers (payee, agent key, credential issuer key, payment " +
  "instrument fingerprint) and per-day flags cross orgs, counted only where at least k = 3 " +
  "orgs contributed, the reader's own share subtracted (docs/network.md). Per mode: a " +
  "session's `x-mode` picks it, and test mode only ever meets test mode.";

const read = createRoute(
  guarded(
    null,
    {
      method: "get",
      path: "/v1/network-settings",
      tags,
      summary: "Whether the org shares and reads network fraud signals in this mode",
      description: `Every member of the org may read them. ${SHARED}`,
      responses: {
        200: json(NetworkSettings, "The settings (off until set)"),
        ...errorResponses(401, 403, 503),
      },
    },
    { sessionOnly: true },
  ),
);

const update = createRoute(
  guarded(
    "network:write",
    {
      method: "post",
      path: "/v1/network-settings",
      tags,
      summary: "Join or leave the network in this mode (owners and admins)",
      description:
        "`contribute`: the mode's payments and fraud labels of the last 180 days count in the " +
        "network, and keep counting as they come. `consume`: assessments read the network's " +
        "counts; only with `contribute` (an org that does not contribute does not consume). " +
        "`contribute: false` deletes everything the org contributed in that mode. Recorded in " +
        `the audit ledger as \`network_settings.updated\`. ${SHARED}`,
      request: { body: jsonBody(UpdateNetworkSettings) },
      responses: {
        200: json(NetworkSettings, "The updated settings"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { sessionOnly: true },
  ),
);

export function registerNetworkSettings(app: OpenAPIHono<AppEnv>) {
  app.openapi(read, async (c) => c.json(await readNetworkSettings(c.var.tenant), 200));

  app.openapi(update, async (c) => {
    return c.json(await updateNetworkSettings(c.var.tenant, c.req.valid("json")), 200);
  });
}
