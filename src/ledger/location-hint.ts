import { z } from "zod";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

// Where the org Durable Objects are created (docs/latency.md, Placement). Cloudflare places a
// Durable Object near the Worker that first asks for it unless `get(id, { locationHint })`
// names a region; the hint should match the database's region, so the object's group-commit
// write to Postgres is a short hop. A hint applies only when the object is first created:
// an existing org's object stays where it is (objects do not move), so setting the hint later
// places only orgs created (or first assessed) afterwards.

/** Cloudflare's documented location hints (developers.cloudflare.com, Durable Objects, "Data location"). */
export const LOCATION_HINTS = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "oc",
  "afr",
  "me",
] as const;

const LocationHint = z.enum(LOCATION_HINTS);
export type LocationHint = z.infer<typeof LocationHint>;

/**
 * The `LEDGER_LOCATION_HINT` variable: undefined when unset or empty (Cloudflare chooses), the
 * hint when it is one of Cloudflare's; anything else fails closed with a 503, as every other
 * misconfigured binding does: a typo must not silently leave the objects far from the database.
 */
export function ledgerLocationHint(value: string | undefined): LocationHint | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const parsed = LocationHint.safeParse(value.trim());
  if (parsed.success) return parsed.data;
  logError("LEDGER_LOCATION_HINT is not a Durable Object location hint", {
    value,
    accepted: LOCATION_HINTS.join(", "),
  });
  throw new ApiError("ledger_unavailable");
}
