import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes a secret-bearing file so that it is never readable by others, not even for a moment,
 * and never half-written: a crash mid-write leaves the previous version, not an empty key file.
 */
export function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600); // the umask cannot loosen it, but an existing temp file could
  renameSync(temporary, path);
}
