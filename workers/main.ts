import { buildApp } from "../src/app";
import type { Env } from "../src/env";

const app = buildApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
