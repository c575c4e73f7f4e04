import { useState } from "preact/hooks";
import { useAction } from "../api";

/**
 * The state of a "Roll back to …" panel (a policy's, a model's): whether it asks for the
 * confirmation, and `rollBack(target)`, which makes `target` active again through `activate`,
 * keeps what it answered in `done`, then reloads the panel's own data (`reload`) and the page
 * around it (`onDone`). A failure stays in `error`, the confirmation open.
 */
export function useRollback<T>(
  activate: (target: T) => Promise<T>,
  reload: () => void,
  onDone: () => void,
) {
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<T | null>(null);
  const { busy, error, run } = useAction();
  const rollBack = (target: T) =>
    run(async () => {
      setDone(await activate(target));
      setConfirming(false);
      reload();
      onDone();
    });
  return { confirming, setConfirming, done, busy, error, rollBack };
}
