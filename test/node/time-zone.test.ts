import { describe, expect, it } from "vitest";
import { canonicalZone, dayOf, fromWallClock, wallClock } from "../../src/lib/time-zone";

// The wall clock of an IANA zone and back (src/lib/time-zone.ts), which the assessments
// summary's `tz` counts days with: the cases daylight saving makes hard.

const wall = (iso: string) => Date.parse(`${iso}Z`);
const utc = (iso: string) => new Date(iso).toISOString();

describe("time zones", () => {
  it("names a zone canonically, and refuses offsets and unknown names", () => {
    expect(canonicalZone("UTC")).toBe("UTC");
    expect(canonicalZone("utc")).toBe("UTC");
    expect(canonicalZone("europe/paris")).toBe("Europe/Paris");
    for (const refused of ["+05:00", "-0300", "Mars/Olympus_Mons", "", "Europe/Paris "]) {
      expect(canonicalZone(refused), refused).toBeNull();
    }
  });

  it("reads the wall clock in winter and in summer time", () => {
    expect(wallClock(Date.parse("2026-01-15T12:00:00.250Z"), "Europe/Paris")).toBe(
      wall("2026-01-15T13:00:00.250"),
    );
    expect(wallClock(Date.parse("2026-07-15T12:00:00Z"), "Europe/Paris")).toBe(
      wall("2026-07-15T14:00:00"),
    );
    expect(wallClock(Date.parse("0001-01-01T00:00:00Z"), "UTC")).toBe(wall("0001-01-01T00:00:00"));
  });

  it("finds the instant of a wall clock time on either side of a change", () => {
    expect(utc(fromWallClock(wall("2026-03-29T00:00:00"), "Europe/Paris"))).toBe(
      "2026-03-28T23:00:00.000Z",
    );
    expect(utc(fromWallClock(wall("2026-03-30T00:00:00"), "Europe/Paris"))).toBe(
      "2026-03-29T22:00:00.000Z",
    );
  });

  it("starts a day whose midnight is skipped at the first instant after the gap", () => {
    // Cairo: 2026-04-24 00:00 does not exist; the clock reads 01:00 at 22:00 UTC.
    expect(utc(fromWallClock(wall("2026-04-24T00:00:00"), "Africa/Cairo"))).toBe(
      "2026-04-23T22:00:00.000Z",
    );
  });

  it("takes the earlier of a midnight that comes twice", () => {
    // Havana: on 2026-11-01 the clock goes back from 01:00 to 00:00 (04:00 and 05:00 UTC).
    expect(utc(fromWallClock(wall("2026-11-01T00:00:00"), "America/Havana"))).toBe(
      "2026-11-01T04:00:00.000Z",
    );
  });

  it("names the day of a wall clock", () => {
    expect(dayOf(wall("2026-06-01T23:59:59.999"))).toBe("2026-06-01");
  });
});
