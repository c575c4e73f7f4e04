/** Reading JSON claims as they arrive in a hop: nothing is trusted to have the expected type. */
import { base64UrlToBytes } from "#audit/encoding";

export type Claims = Record<string, unknown>;

export function isClaims(value: unknown): value is Claims {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function has(claims: Claims, name: string): boolean {
  return Object.hasOwn(claims, name);
}

/** The own property `name`, never one inherited from Object.prototype (`constructor`, …). */
export function own(claims: Claims, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/**
 * Sets an own, enumerable property even when `name` is `__proto__`, where plain assignment
 * would replace the object's prototype instead.
 */
export function put(claims: Claims, name: string, value: unknown): void {
  Object.defineProperty(claims, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

export function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A JSON number that is an exact integer (a safe integer), as amounts must be. */
export function safeInteger(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;
}

export function finiteNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

// A BOM is kept (ignoreBOM), so JSON.parse refuses it rather than a decoder dropping it silently.
const utf8Strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** JSON in canonical unpadded base64url of UTF-8; throws on anything else. */
export function jsonOfBase64url(encoded: string): unknown {
  return JSON.parse(utf8Strict.decode(base64UrlToBytes(encoded)));
}
