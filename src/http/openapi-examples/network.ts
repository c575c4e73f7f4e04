// The org's network settings (docs/network.md): whether its mode contributes and consumes.

import type { OperationExamples } from "./example-org";

const networkSettings = {
  object: "network_settings",
  livemode: true,
  contribute: true,
  consume: true,
  excluded: false,
  updated_at: "2026-11-21T09:30:12.408Z",
  contributed_through: "2026-11-21T09:31:02.117Z",
};

export const networkExamples: OperationExamples = {
  "GET /v1/network-settings": networkSettings,
  "POST /v1/network-settings": networkSettings,
};
