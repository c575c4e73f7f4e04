import { setMode, useSettings } from "../api";

/**
 * The test/live switch, as in Stripe's dashboard: every request then carries `x-mode`, and
 * the pages show that mode's data. A real checkbox with `role="switch"`, so Space toggles it.
 */
export function ModeSwitch() {
  const { mode } = useSettings();
  return (
    <label class="mode-switch">
      <input
        type="checkbox"
        role="switch"
        checked={mode === "test"}
        aria-checked={mode === "test"}
        onChange={(event) => setMode(event.currentTarget.checked ? "test" : "live")}
      />
      Test mode
    </label>
  );
}
