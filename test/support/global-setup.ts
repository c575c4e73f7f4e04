import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { ensureReferenceBundle } from "../../scripts/build-reference";
import { startLocalIdpServer } from "../../scripts/dev-idp-server";
import {
  ed25519Jwk,
  localIdentityProvider,
  networkKey,
  p256Jwk,
  principalMasterKey,
} from "../../scripts/local-keys";
import { startSqlEndpoint } from "../../scripts/sql-endpoint";
import { startFixtureServer } from "./fixture-server";

declare module "vitest" {
  export interface ProvidedContext {
    sqlEndpoint: string;
    signingKey: string;
    signingKeyEs256: string;
    principalMasterKey: string;
    networkKeys: string;
    fixtureServer: string;
    idp: string;
    stripeSecretKey: string;
    stripeWebhookSecret: string;
  }
}

/**
 * Starts the local SQL endpoint on a free port with a fresh database (PGlite in memory, or a new
 * database on the PostgreSQL server named by DATABASE_URL) and fresh keys for the run.
 */
export default async function setup(project: TestProject) {
  // The Worker's static assets (the API reference's renderer) as `npm ci` builds them: the pool
  // reads the assets directory after this setup, so a stale or missing copy is replaced first.
  ensureReferenceBundle();
  const endpoint = await startSqlEndpoint({
    databaseUrl: process.env.DATABASE_URL,
    fresh: true,
    migrationsFolder: resolve(import.meta.dirname, "../../drizzle"),
  });
  project.provide("sqlEndpoint", endpoint.url);
  project.provide("signingKey", JSON.stringify(ed25519Jwk().privateJwk));
  project.provide("signingKeyEs256", JSON.stringify(p256Jwk().privateJwk));
  const stripe = {
    secretKey: `sk_test_${randomBytes(12).toString("hex")}`,
    webhookSecret: `whsec_${randomBytes(24).toString("base64url")}`,
  };
  const fixtures = await startFixtureServer(stripe);
  project.provide("stripeSecretKey", stripe.secretKey);
  project.provide("stripeWebhookSecret", stripe.webhookSecret);
  project.provide("fixtureServer", fixtures.url);
  project.provide("principalMasterKey", JSON.stringify(principalMasterKey()));
  project.provide("networkKeys", JSON.stringify([networkKey()]));
  // The local identity provider, served on loopback: the console's sign-in is walked through
  // it (test/worker/console-auth.test.ts), and every session token names it as its issuer.
  const idp = localIdentityProvider("");
  const idpServer = await startLocalIdpServer({
    host: "127.0.0.1",
    port: 0,
    privateJwk: idp.privateJwk as typeof idp.privateJwk & { kid: string },
    jwks: idp.jwks,
    clientId: idp.audience,
    // vitest.config.ts's PUBLIC_BASE_URL: the Worker names its callback from it.
    redirectUris: ["https://risk-service.test/console/auth/callback"],
  });
  project.provide("idp", JSON.stringify({ ...idp, issuer: idpServer.url }));
  return async () => {
    await idpServer.close();
    await fixtures.close();
    await endpoint.close();
  };
}
