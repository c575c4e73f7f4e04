/**
 * The one logger: a JSON line per event, so log search filters on fields. Fields carry ids,
 * codes, counts and error messages, never a secret, a key or a request body.
 */
export function logError(msg: string, fields: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ msg, ...fields }));
}
