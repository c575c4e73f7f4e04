/**
 * The console's one way to the API: `@agent-risk/client` with the browser's session. The
 * session cookie (HttpOnly) goes by itself on same-origin requests; each request adds the CSRF
 * token the sign-in left in a readable cookie (docs/console.md), the mode the switch chose and
 * the organization, when one is picked.
 */
import { ApiError, createClient } from "@agent-risk/client";
import { useCallback, useEffect, useState } from "preact/hooks";

export type Mode = "live" | "test";

const MODE_KEY = "agent-risk.console.mode";
const ORG_KEY = "agent-risk.console.org";
const CSRF_COOKIE = "__Host-ar_csrf";

/** Reads `localStorage`, which a locked-down browser may refuse: then nothing is remembered. */
function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function store(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // The choice then lasts until the page reloads.
  }
}

const chosenMode = stored(MODE_KEY);
let mode: Mode = chosenMode === "test" ? "test" : "live";
/** Whether a person picked the mode on this browser (the switch), or the console may pick. */
let modeChosen = chosenMode === "test" || chosenMode === "live";
let orgId: string | null = stored(ORG_KEY);
const listeners = new Set<() => void>();

function changed(): void {
  for (const listener of listeners) listener();
}

export function currentMode(): Mode {
  return mode;
}

/** Switches test/live for every later request, remembered across visits. */
export function setMode(next: Mode): void {
  mode = next;
  modeChosen = true;
  store(MODE_KEY, next);
  changed();
}

export function isModeChosen(): boolean {
  return modeChosen;
}

/**
 * The mode the console picked for this visit (initial-mode.ts), not remembered: the next visit
 * picks again, unless the person has used the switch meanwhile.
 */
export function adoptMode(next: Mode): void {
  if (modeChosen || next === mode) return;
  mode = next;
  changed();
}

export function currentOrg(): string | null {
  return orgId;
}

/** Picks the organization the session acts for (`x-org-id`); null lets the server choose. */
export function setOrg(next: string | null): void {
  orgId = next;
  store(ORG_KEY, next);
  changed();
}

/**
 * Forgets the stored organization at sign-out, so the next user of this browser does not
 * inherit it. This page keeps its value: changing it would re-ask GET /v1/me of the ended
 * session (401), and the next sign-in is a navigation that loads the console afresh.
 */
export function forgetOrg(): void {
  store(ORG_KEY, null);
}

/** The mode and organization, re-rendering the caller when either changes. */
export function useSettings(): { mode: Mode; orgId: string | null } {
  const [, bump] = useState(0);
  useEffect(() => {
    const listener = () => bump((n) => n + 1);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return { mode, orgId };
}

/** The CSRF token the sign-in set: the one cookie a script may read. */
export function csrfToken(): string | undefined {
  for (const part of document.cookie.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

/** The headers of every console request, read when it is sent. */
export function consoleHeaders(): Record<string, string> {
  const headers: Record<string, string> = { "x-mode": mode };
  const token = csrfToken();
  if (token) headers["x-csrf-token"] = token;
  if (orgId) headers["x-org-id"] = orgId;
  return headers;
}

export const api = createClient({
  baseUrl: location.origin,
  credentials: "same-origin",
  headers: consoleHeaders,
  retry: { maxRetries: 1 },
});

/**
 * Fetches a file the API streams (the audit export) with the console's headers and hands it to
 * the browser as a download: a plain link cannot carry the CSRF header.
 */
export async function download(path: string, filename: string): Promise<void> {
  const response = await fetch(new URL(path, location.origin), {
    credentials: "same-origin",
    headers: consoleHeaders(),
  });
  if (!response.ok) {
    throw ApiError.of(response, await response.json().catch(() => undefined));
  }
  const url = URL.createObjectURL(await response.blob());
  try {
    const link = document.createElement("a");
    link.href = url;
    link.download = filename;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // After the click has started the download: revoking at once can cancel it in some browsers.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}

/** What a failed call says, for ErrorBanner: the service's envelope, or what the browser said. */
export interface Failure {
  status?: number;
  error: string;
  details?: unknown;
}

export function failureOf(error: unknown): Failure {
  if (error instanceof ApiError) {
    return { status: error.status, error: error.error, details: error.details };
  }
  return { error: "network_error", details: error instanceof Error ? error.message : error };
}

export interface Loaded<T> {
  data: T | undefined;
  failure: Failure | undefined;
  loading: boolean;
  /** Loads again (after a change the page made). */
  reload: () => void;
}

/**
 * Runs `load` when the component mounts and whenever `deps` change; a result that arrives
 * after a newer load started is dropped, so a fast filter change never shows stale rows.
 */
export function useApiCall<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; failure?: Failure; loading: boolean }>({
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ failure: failureOf(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data: state.data, failure: state.failure, loading: state.loading, reload };
}

export interface Action {
  /** True while a call runs (to disable what would start another). */
  busy: boolean;
  /** What the last call failed with; cleared when the next one starts. */
  error: Failure | undefined;
  /** Shows a failure found before calling (a form's own check), or clears it. */
  setError: (failure: Failure | undefined) => void;
  /** Runs `call`: busy meanwhile, the error cleared first and set from what it throws. */
  run: (call: () => Promise<void>) => Promise<void>;
}

/**
 * A change a page makes when asked (create, revoke, activate…): its busy state for the button
 * and its failure for an ErrorBanner.
 */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Failure>();
  const run = useCallback(async (call: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await call();
    } catch (caught) {
      setError(failureOf(caught));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}
