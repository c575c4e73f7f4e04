/**
 * Verifying an AP2 v0.2 credential chain: pure compute (no I/O, no state), fail-closed.
 *
 *   const verdict = await verifyChain(parseChain(credential), { anchors, presentation, now });
 *
 * The order of the checks, so that the first failure found is the one answered:
 * 1. hop by hop, root first: the header (`alg`, `crit`), the signature (root: a trust anchor;
 *    hop i: the key hop i-1 delegated), the disclosures and the one delegate item, the `typ` and
 *    binding of a key-binding hop, the `cnf` it hands on (or its absence on the last hop);
 *    a lone root holds no closed mandate;
 * 2. the `vct` of every hop (an unknown one answers `vctKnown: false` and no failure code; one in
 *    the wrong place or of the wrong kind is `delegation_broken`);
 * 3. `aud` and `nonce` of the last hop, when the caller gives them;
 * 4. the time windows of every hop and every mandate;
 * 5. the root's open mandate disclosing every constraint type its issuer requires, then the
 *    closed mandate within every open hop's constraints.
 * docs/credentials.md has the rules and their failure codes.
 */
import type { ParsedChain, ParsedHop } from "./chain";
import { type Claims, own } from "./claims";
import { checkConstraints } from "./constraints";
import { textDigest } from "./disclosures";
import { type CredentialFailure, type FailureDetail, Refusal, refuse } from "./failures";
import {
  checkClosed,
  checkHeader,
  checkKeyBinding,
  checkSignatureForm,
  delegatedKey,
  type HopReading,
  readHop,
  type TrustAnchors,
  verifyDelegated,
  verifyRoot,
} from "./hops";
import { type PinnedKey, signatureSpellings, thumbprint } from "./keys";
import { mandateType } from "./mandates";
import { type Spend, spendOf } from "./spend";
import { checkValidity, DEFAULT_SKEW_SECONDS, validityWindow } from "./validity";

export type { TrustAnchors } from "./hops";

/** What the verifier is presented with besides the chain. */
export interface PresentationInputs {
  /** The verifier's own audience, which the last hop's `aud` must equal. Unchecked if absent. */
  aud?: string;
  /** The challenge the last hop's `nonce` must equal. Unchecked if absent. */
  nonce?: string;
  /**
   * The merchant's checkout JWT. A closed payment's `transaction_id` and a closed checkout's
   * `checkout_hash` must be its base64url SHA-256. Without it, a payment's `transaction_id` is
   * not checked and a checkout is checked against the JWT its mandate discloses.
   */
  checkout_jwt?: string;
  /** The open checkout mandate's hash that a `payment.reference` constraint must name. */
  open_checkout_hash?: string;
}

export interface VerifyOptions {
  anchors: TrustAnchors;
  presentation: PresentationInputs;
  /** Unix seconds. */
  now: number;
  /** Allowed clock difference for `exp`, `iat` and `nbf`, seconds; default 300. */
  skewSeconds?: number;
}

export interface ChainVerdict {
  /** The only signal to accept: every rule held. */
  verified: boolean;
  /** Why not; null when verified, and null when (only) a `vct` is unknown: see `vctKnown`. */
  failure: CredentialFailure | null;
  /** For `constraint_violated`: which constraint (e.g. "payment.amount_range"), and a message. */
  detail: FailureDetail | null;
  /**
   * False when a hop's mandate has a `vct` that is not one of the four AP2 v0.2 types, exact
   * with the version suffix (the service's 400 `unknown_mandate_type`). Hops that could not be
   * read do not count.
   */
  vctKnown: boolean;
  hops: number;
  /** base64url(SHA-256(leaf JWS)): AP2's receipt reference (the SDK's form); null for a lone root. */
  reference: string | null;
  /**
   * base64url(SHA-256(the root's `header.payload`)): what the issuer signed, whatever the
   * spelling of its signature. The key of "one consent pays once" and of budgets (`spend.ts`).
   */
  consent: string | null;
  /** The issuer of the trust anchor that verified the root. */
  issuerId: string | null;
  /** RFC 7638 thumbprint of the issuer's key that verified the root. */
  issuerKeyThumbprint: string | null;
  /**
   * When every hop and mandate of a verified chain is valid, unix seconds before the skew: the
   * latest `iat`/`nbf` and the earliest `exp` (null where none says). Null unless verified.
   */
  window: { notBefore: number | null; notAfter: number | null } | null;
  /** RFC 7638 thumbprint of the key that signed the last hop, once its signature verified. */
  holderThumbprint: string | null;
  /** The leaf mandate's `vct`. */
  vct: string | null;
  /** The leaf's effective payload (its mandate, disclosures resolved), even if not verified. */
  mandate: Record<string, unknown> | null;
  /** The open hops' effective payloads, root first (those that could be read). */
  openMandates: Record<string, unknown>[];
  /** What the Durable Object must check and record for a verified payment; null otherwise. */
  spend: Spend | null;
}

/** Everything the chain says, read without trusting it: what the service reports on a refusal. */
function describe(chain: ParsedChain, readings: (HopReading | Refusal)[]): ChainVerdict {
  const last = chain.hops.length - 1;
  const read = (i: number) => {
    const reading = readings[i];
    return reading instanceof Refusal ? undefined : reading?.mandate;
  };
  const mandate = last > 0 ? (read(last) ?? null) : null;
  const vct = own(mandate ?? {}, "vct");
  const mandates = readings.map((_, i) => read(i)).filter((m) => m !== undefined);
  return {
    verified: false,
    failure: null,
    detail: null,
    vctKnown: mandates.every((m) => mandateType(own(m, "vct")) !== null),
    hops: chain.hops.length,
    reference: last > 0 ? textDigest(chain.hops[last]?.jws ?? "") : null,
    consent: consentOf(chain.hops[0]?.jws),
    issuerId: null,
    issuerKeyThumbprint: null,
    holderThumbprint: null,
    vct: typeof vct === "string" ? vct : null,
    mandate,
    openMandates: readings
      .slice(0, Math.max(last, 1))
      .map((_, i) => read(i))
      .filter((m) => m !== undefined),
    spend: null,
    window: null,
  };
}

function reading(readings: (HopReading | Refusal)[], i: number): HopReading {
  const found = readings[i];
  if (found === undefined) return refuse("delegation_broken", `hop ${i} is missing`);
  if (found instanceof Refusal) throw found;
  if (found.refusal) throw found.refusal;
  return found;
}

/**
 * Step 1: signatures, disclosures, bindings and keys, hop by hop. Answers the constraint types
 * the root's issuer requires disclosed.
 */
async function verifyHops(
  chain: ParsedChain,
  readings: (HopReading | Refusal)[],
  anchors: TrustAnchors,
  verdict: ChainVerdict,
): Promise<readonly string[]> {
  const last = chain.hops.length - 1;
  let delegated: PinnedKey | undefined;
  let required: readonly string[] = [];
  for (const hop of chain.hops) {
    checkHeader(hop);
    checkSignatureForm(hop);
    let signer: PinnedKey;
    if (hop.index === 0) {
      const root = await verifyRoot(hop, anchors);
      verdict.issuerId = root.issuerId;
      verdict.issuerKeyThumbprint = thumbprint(root.key);
      required = root.requiredConstraints;
      signer = root.key;
    } else {
      signer = delegated as PinnedKey;
      await verifyDelegated(hop, signer, hop.index < last);
    }
    const { claims, mandate } = reading(readings, hop.index);
    const previous = chain.hops[hop.index - 1];
    if (previous) checkKeyBinding(hop, previous, claims, hop.index === last);
    if (hop.index === 0 || hop.index < last) {
      delegated = delegatedKey(hop, mandate);
    } else {
      checkClosed(hop, mandate);
      verdict.holderThumbprint = thumbprint(signer);
    }
  }
  if (last === 0) refuse("delegation_broken", "a lone root SD-JWT holds no closed mandate");
  return required;
}

/**
 * Step 5's first half (AP2 #339): a digest without its disclosure cannot be told from a decoy,
 * so a constraint the issuer made selectively disclosable can be withheld by any later holder,
 * and would silently not apply. The issuer's `required_constraints` of the mandate's kind must
 * each appear in the root's open mandate, the one the issuer signed: an intermediate hop's
 * constraints are its delegate's, and cannot stand in for the issuer's.
 */
function checkDisclosed(root: Claims, kind: "payment" | "checkout", required: readonly string[]) {
  const list = own(root, "constraints");
  const present = new Set(
    (Array.isArray(list) ? list : []).map((c) =>
      typeof c === "object" && c !== null ? own(c as Claims, "type") : undefined,
    ),
  );
  const missing = required.find((type) => type.startsWith(`${kind}.`) && !present.has(type));
  if (missing !== undefined) {
    refuse(
      "constraint_withheld",
      `the root's open mandate does not disclose ${missing}, which its issuer requires`,
      missing,
    );
  }
}

/** Step 2: every `vct` known, open ones delegating, the last closed, all of one kind. */
function mandateKind(mandates: Claims[]): "payment" | "checkout" | null {
  const types = mandates.map((m) => mandateType(own(m, "vct")));
  const leaf = types[types.length - 1];
  if (!leaf || types.some((t) => t === null)) return null;
  types.forEach((type, i) => {
    const open = i < types.length - 1;
    if (type?.open !== open) {
      refuse("delegation_broken", `hop ${i}'s mandate must be ${open ? "open" : "closed"}`);
    }
    if (type?.kind !== leaf.kind) refuse("delegation_broken", "the hops mix payment and checkout");
  });
  return leaf.kind;
}

async function verify(
  chain: ParsedChain,
  readings: (HopReading | Refusal)[],
  options: VerifyOptions,
  verdict: ChainVerdict,
): Promise<ChainVerdict> {
  const required = await verifyHops(chain, readings, options.anchors, verdict);
  const hops = chain.hops.map((hop) => reading(readings, hop.index));
  const kind = mandateKind(hops.map((h) => h.mandate));
  if (kind === null) {
    const i = hops.findIndex((h) => mandateType(own(h.mandate, "vct")) === null);
    const vct = JSON.stringify(own(hops[i]?.mandate ?? {}, "vct") ?? null);
    const message = `hop ${i}'s vct ${vct} is not an AP2 v0.2 mandate type (exact, with version)`;
    return { ...verdict, detail: { message } };
  }
  const leaf = hops[hops.length - 1] as HopReading;
  const { aud, nonce } = options.presentation;
  if (aud !== undefined && own(leaf.claims, "aud") !== aud) {
    refuse("audience_mismatch", "the last hop's aud is not this verifier's");
  }
  if (nonce !== undefined && own(leaf.claims, "nonce") !== nonce) {
    refuse("nonce_mismatch", "the last hop's nonce is not the one expected");
  }
  checkValidity(hops, options.now, options.skewSeconds ?? DEFAULT_SKEW_SECONDS);
  const opens = hops.slice(0, -1).map((h) => h.mandate);
  checkDisclosed(opens[0] as Claims, kind, required);
  const closed = checkConstraints(kind, opens, leaf.mandate, {
    checkoutJwt: options.presentation.checkout_jwt,
    openCheckoutHash: options.presentation.open_checkout_hash,
    now: options.now,
  });
  const root = chain.hops[0] as ParsedHop;
  const spend = closed
    ? spendOf(
        {
          consent: consentOf(root.jws) as string,
          // Verified, so its header's alg is its key's.
          rootSpellings: signatureSpellings(root.jws, own(root.header, "alg")).map(textDigest),
        },
        opens,
        closed,
        options.now * 1000,
      )
    : null;
  return { ...verdict, verified: true, spend, window: validityWindow(hops) };
}

/**
 * Verifies a parsed chain against the trust anchors and the presentation's inputs at `now`.
 * Never throws for any chain `parseChain` returns; throws a TypeError only for options that
 * would make a check meaningless (a non-finite `now`, a negative skew).
 */
export async function verifyChain(
  chain: ParsedChain,
  options: VerifyOptions,
): Promise<ChainVerdict> {
  const skew = options.skewSeconds ?? DEFAULT_SKEW_SECONDS;
  if (!Number.isFinite(options.now) || !Number.isFinite(skew) || skew < 0) {
    throw new TypeError("verifyChain: now must be finite and skewSeconds finite and non-negative");
  }
  let verdict: ChainVerdict | undefined;
  try {
    const readings = chain.hops.map(readHop);
    verdict = describe(chain, readings);
    return await verify(chain, readings, options, verdict);
  } catch (error) {
    const refusal =
      error instanceof Refusal
        ? error
        : // Fail closed on what no rule foresaw: refused, never accepted, never thrown.
          new Refusal("delegation_broken", { message: "the chain could not be followed" });
    return {
      ...(verdict ?? emptyVerdict(chain)),
      verified: false,
      failure: refusal.failure,
      detail: refusal.detail,
      spend: null,
      window: null,
    };
  }
}

/** The digest of a JWS's signing input (`header.payload`): its content, not its spelling. */
function consentOf(jws: unknown): string | null {
  return typeof jws === "string" ? textDigest(jws.slice(0, jws.lastIndexOf("."))) : null;
}

function emptyVerdict(chain: ParsedChain): ChainVerdict {
  return {
    verified: false,
    failure: null,
    detail: null,
    vctKnown: true,
    hops: chain.hops?.length ?? 0,
    reference: null,
    consent: consentOf(chain.hops?.[0]?.jws),
    issuerId: null,
    issuerKeyThumbprint: null,
    holderThumbprint: null,
    vct: null,
    mandate: null,
    openMandates: [],
    spend: null,
    window: null,
  };
}
