// IANA time zones through the runtime's Intl (ICU): the wall clock of an instant in a zone and
// back, for windows of local days (the assessments summary's `tz`).

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * The zone's canonical IANA name, or null when it is not one the runtime knows. A UTC offset
 * (`+05:00`) is refused: Postgres reads such a string with the POSIX sign, the opposite of ISO
 * 8601's, so it would silently shift every day.
 */
export function canonicalZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

function formatter(zone: string): Intl.DateTimeFormat {
  let found = formatters.get(zone);
  if (!found) {
    found = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, found);
  }
  return found;
}

/** The wall clock in `zone` at `instant`, as the instant that reads the same in UTC (ms). */
export function wallClock(instant: number, zone: string): number {
  const parts: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(new Date(instant))) {
    parts[part.type] = part.value;
  }
  const year = Number(parts.year);
  const wall = new Date(0);
  wall.setUTCFullYear(
    parts.era === "BC" || parts.era === "B" ? 1 - year : year,
    Number(parts.month) - 1,
    Number(parts.day),
  );
  wall.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall.getTime() + (((instant % 1000) + 1000) % 1000);
}

/**
 * The first instant whose wall clock in `zone` reads `wall` (or, where a daylight-saving change
 * skips that time, the first instant after the gap).
 */
export function fromWallClock(wall: number, zone: string): number {
  let instant = wall - (wallClock(wall, zone) - wall);
  instant = wall - (wallClock(instant, zone) - instant);
  const read = wallClock(instant, zone);
  // In a gap the two offsets disagree and the guess reads earlier than asked: step over the gap.
  if (read < wall) instant += wall - read;
  // Where the clock goes back, the wall time comes twice: the earlier instant, if it is one.
  const earlier = instant - (wallClock(instant - DAY_MS / 24, zone) === wall ? DAY_MS / 24 : 0);
  return earlier;
}

/** The calendar day (YYYY-MM-DD) of a wall clock. */
export function dayOf(wall: number): string {
  return new Date(Math.floor(wall / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}
