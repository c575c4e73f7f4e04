import { defineConfig } from "drizzle-kit";

// Generates SQL only; migrations are applied by the local SQL endpoint (scripts/sql-endpoint)
// or, in production, by `npm run db:migrate` with the owner's connection string.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./drizzle",
});
