/**
 * `npm run token -- --sub <user name> [--ttl 1h]`: a session JWT from the local identity
 * provider that `npm run dev` set up, as the console would hold after signing in with that user
 * name: the same subject (`local|<name>`) and email (`<name>@example.test`), so the same user and
 * organization (scripts/local-user.ts).
 *
 * The token is the LAST line of stdout and nothing else goes there, so
 * `TOKEN=$(npm run -s token -- --sub alice)` works; hints go to stderr.
 */
import { parseArgs } from "node:util";
import { importJWK, SignJWT } from "jose";
import { readLocalIdp } from "./dev-idp.ts";
import { devPaths } from "./dev-state.ts";
import { LOCAL_USER_NAME_RULE, localUserClaims } from "./local-user.ts";

const USAGE = "usage: npm run token -- --sub <user name> [--ttl 1h]";

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function options() {
  try {
    const { values } = parseArgs({
      options: {
        sub: { type: "string" },
        ttl: { type: "string", default: "1h" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help) {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (!values.sub) fail(`--sub is required\n${USAGE}`);
    const user = localUserClaims(values.sub);
    if (!user) fail(`--sub ${JSON.stringify(values.sub)}: ${LOCAL_USER_NAME_RULE}\n${USAGE}`);
    return { name: values.sub, user, ttl: values.ttl };
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const { name, user, ttl } = options();
  const { sub, ...claims } = user;
  const paths = devPaths();
  const idp = readLocalIdp(paths.localIdp);
  if (!idp) {
    fail(
      `no local identity provider at ${paths.localIdp}: run \`npm run dev\` first ` +
        "(it creates one, with the same DEV_STATE_DIR if you use one)",
    );
  }
  const key = await importJWK(idp.privateJwk, "EdDSA");
  let token: string;
  try {
    token = await new SignJWT(claims)
      .setProtectedHeader({ alg: "EdDSA", kid: idp.privateJwk.kid, typ: "JWT" })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime(ttl)
      .sign(key);
  } catch (error) {
    // jose rejects what is not a duration it knows ("1h", "30m", "2 days" are fine).
    fail(`--ttl ${JSON.stringify(ttl)}: ${error instanceof Error ? error.message : error}`);
  }
  if (process.stdout.isTTY) {
    process.stderr.write(
      `session for ${name} (${sub}, ${claims.email}; ${ttl}); send it as: authorization: Bearer <token>\n`,
    );
  }
  process.stdout.write(`${token}\n`);
}

await main();
