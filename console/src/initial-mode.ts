/**
 * The mode the console opens in when nobody has used the switch on this browser: test while the
 * organization has test assessments and no live one (an integration under way, as after the
 * README's walk-through, which runs on a test key), live otherwise. Opening in live mode there
 * would show an empty console beside a working integration. The pick is not remembered
 * (`adoptMode`): once live traffic exists, the next visit opens live.
 */
import { useEffect, useState } from "preact/hooks";
import { adoptMode, api, isModeChosen, type Mode } from "./api";

async function hasAssessments(mode: Mode): Promise<boolean> {
  const { data } = await api.GET("/v1/assessments", {
    params: { query: { limit: 1 } },
    headers: { "x-mode": mode },
  });
  return data.data.length > 0;
}

export async function initialMode(): Promise<Mode> {
  if (await hasAssessments("live")) return "live";
  return (await hasAssessments("test")) ? "test" : "live";
}

/**
 * False until the visit's mode is settled, so no page loads one mode's data and then the
 * other's. `canRead`: whether the caller may read assessments (undefined while `GET /v1/me` is
 * on its way); one who may not (a member) opens in live mode, as before, without asking.
 */
export function useInitialMode(canRead: boolean | undefined): boolean {
  const [settled, setSettled] = useState(isModeChosen());
  useEffect(() => {
    if (settled || canRead === undefined) return;
    if (!canRead) {
      setSettled(true);
      return;
    }
    let current = true;
    // A failure here opens live mode; the page then shows what fails, with its own banner.
    initialMode()
      .then(adoptMode, () => undefined)
      .finally(() => current && setSettled(true));
    return () => {
      current = false;
    };
  }, [settled, canRead]);
  return settled;
}
