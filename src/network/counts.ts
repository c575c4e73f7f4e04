/**
 * What `network_signals` answers per digest asked (drizzle/0029, network_signals): the other
 * organizations that sent anything about it in the window, and those that confirmed fraud on or
 * a legitimate payment with it; every count 0 while fewer than k orgs, the reader included,
 * sent anything about it. Apart from the keys (src/network/keys.ts)
 * so that what only reads answers needs no secret's module.
 */
export interface NetworkCount {
  /** `payee`, `agent_key`, `issuer` or `instrument` (NETWORK_KINDS). */
  kind: string;
  digest: string;
  orgs: number;
  fraud_orgs: number;
  legitimate_orgs: number;
}
