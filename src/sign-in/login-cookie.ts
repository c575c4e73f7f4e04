/**
 * The sign-in's secrets between the login redirect and the callback (state, nonce, PKCE
 * verifier), kept in the browser as the `__Host-ar_login` cookie, sealed with AES-256-GCM under
 * the console's login key: the browser carries them but can neither read nor forge them, and
 * the Worker keeps no state between the two requests. `v1.<iv>.<ciphertext>` (base64url).
 */
import { z } from "zod";
import { base64url, fromBase64url, utf8 } from "#audit/encoding";
import type { Env } from "../env";
import { LOGIN_TTL_SECONDS } from "./cookies";
import { consoleKeys } from "./keys";
import type { LoginState } from "./oidc";

const VERSION = "v1";
const IV_BYTES = 12;
const AAD = utf8("agent-risk/console-login/v1");

const Sealed = z.object({
  state: z.string().min(1),
  nonce: z.string().min(1),
  verifier: z.string().min(43),
  /** Unix seconds after which the sign-in has to start again. */
  exp: z.number().int(),
});

export async function sealLogin(env: Env, login: LoginState, now = Date.now()): Promise<string> {
  const { login: key } = await consoleKeys(env);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const body = { ...login, exp: Math.floor(now / 1000) + LOGIN_TTL_SECONDS };
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: AAD },
    key,
    utf8(JSON.stringify(body)),
  );
  return [VERSION, base64url(iv), base64url(new Uint8Array(sealed))].join(".");
}

/** The sign-in sealed in `value`, or null when it is missing, altered, foreign or expired. */
export async function openLogin(
  env: Env,
  value: string | undefined,
  now = Date.now(),
): Promise<LoginState | null> {
  const [version, iv, ciphertext, ...rest] = value?.split(".") ?? [];
  if (version !== VERSION || !iv || !ciphertext || rest.length > 0) return null;
  const { login: key } = await consoleKeys(env);
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(iv), additionalData: AAD },
      key,
      fromBase64url(ciphertext),
    );
    const parsed = Sealed.safeParse(JSON.parse(new TextDecoder().decode(plain)));
    if (!parsed.success || parsed.data.exp * 1000 < now) return null;
    const { state, nonce, verifier } = parsed.data;
    return { state, nonce, verifier };
  } catch {
    return null;
  }
}
