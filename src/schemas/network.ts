import { z } from "@hono/zod-openapi";

// The network settings of a mode (docs/network.md): whether the org contributes its payments'
// keyed digests and its fraud labels to the network, and whether it reads the network's counts.

export const networkTags = ["Network"];

export const NetworkSettings = z
  .object({
    object: z.literal("network_settings"),
    livemode: z.boolean().openapi({ description: "The mode these settings are for" }),
    contribute: z.boolean().openapi({
      description:
        "The org's payments and labels of this mode count in the network, as keyed digests",
    }),
    consume: z.boolean().openapi({
      description: "Assessments of this mode read the network's counts (only with `contribute`)",
    }),
    excluded: z.boolean().openapi({
      description:
        "An operator excluded the org from the network: its contributions do not count and it " +
        "reads nothing, whatever it sets",
    }),
    updated_at: z
      .string()
      .nullable()
      .openapi({ description: "When the settings last changed; null while never set" }),
    contributed_through: z
      .string()
      .nullable()
      .openapi({
        description:
          "Every payment and label of this mode recorded before this instant is in the network " +
          "(the queue contributes within seconds to minutes). Null until the first contribution " +
          "after joining ends, and while the org does not contribute or is excluded",
      }),
  })
  .openapi("NetworkSettings", {
    example: {
      object: "network_settings",
      livemode: true,
      contribute: true,
      consume: true,
      excluded: false,
      updated_at: "2026-11-21T09:30:12.408Z",
      contributed_through: "2026-11-21T09:31:02.117Z",
    },
  });

export const UpdateNetworkSettings = z
  .strictObject({
    contribute: z.boolean().openapi({
      description: "Contribute this mode's payments and labels; false deletes what it contributed",
    }),
    consume: z.boolean().openapi({ description: "Read the network's counts in this mode" }),
  })
  .refine((body) => body.contribute || !body.consume, {
    path: ["consume"],
    message: "an org that does not contribute does not consume: set contribute to true as well",
  })
  .openapi("UpdateNetworkSettings", { example: { contribute: true, consume: true } });
