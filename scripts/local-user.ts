/**
 * Who a local user name is. The local identity provider's sign-in page (dev-idp-server.ts) and
 * `npm run token` (token.ts) both turn a name into these claims, here and nowhere else, so
 * signing in to the console as "alice" and `npm run token -- --sub alice` are one person: one
 * `users` row (keyed by the subject) and so one organization.
 */

/** What the sign-in page and `--sub` accept: a subject's safe characters only. */
export const LOCAL_USER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
export const LOCAL_USER_NAME_RULE = "A user name is 1 to 64 letters, digits, '.', '_' or '-'.";

export interface LocalUserClaims {
  /** `local|<name>`: the prefix keeps local subjects apart from a real provider's. */
  sub: string;
  /** `<name>@example.test`: a reserved domain (RFC 2606), never someone's real mailbox. */
  email: string;
  email_verified: true;
}

/** The claims of the local user `name`, or undefined when it is not a user name. */
export function localUserClaims(name: string): LocalUserClaims | undefined {
  if (!LOCAL_USER_NAME.test(name)) return undefined;
  return { sub: `local|${name}`, email: `${name}@example.test`, email_verified: true };
}
