/**
 * The console's shell: who is signed in (GET /v1/me), the organization on first sign-in, the
 * navigation, the mode switch, sign-out, and the page the URL's hash names.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import {
  api,
  consoleHeaders,
  csrfToken,
  type Failure,
  failureOf,
  forgetOrg,
  setOrg,
  useApiCall,
  useSettings,
} from "./api";
import { ErrorBanner } from "./components/error-banner";
import { ModeSwitch } from "./components/mode-switch";
import { useInitialMode } from "./initial-mode";
import { NotFoundPage } from "./pages/not-found";
import { SignedOutPage } from "./pages/signed-out";
import { href, match, useRoutePath } from "./router";
import { routes } from "./routes";

const NAV: { path: string; label: string }[] = [
  { path: "", label: "Overview" },
  { path: "assessments", label: "Assessments" },
  { path: "reviews", label: "Reviews" },
  { path: "policies", label: "Policies" },
  { path: "models", label: "Models" },
  { path: "retro-study", label: "Retro study" },
  { path: "agents", label: "Agents" },
  { path: "audit", label: "Audit" },
  { path: "webhooks", label: "Webhooks" },
  { path: "network", label: "Network" },
  { path: "api-keys", label: "API keys" },
  { path: "billing", label: "Billing" },
];

export function App() {
  const { mode, orgId } = useSettings();
  const [signedOut, setSignedOut] = useState(false);
  const me = useApiCall(async () => (await api.GET("/v1/me")).data, [mode, orgId]);
  // Test mode when the org has only test data, unless the person picked a mode here before.
  const modeSettled = useInitialMode(me.data ? me.data.scopes.includes("assess:read") : undefined);
  // The org id kept in localStorage may be another user's (the last one on this browser) or no
  // longer this user's: /v1/me then refuses it (403, or 400 if malformed). Forget it and let the
  // server pick this user's default organization, rather than stop at the gate below.
  const staleOrg = orgId !== null && (me.failure?.status === 403 || me.failure?.status === 400);
  useEffect(() => {
    if (staleOrg) setOrg(null);
  }, [staleOrg]);
  if (signedOut || me.failure?.status === 401) {
    return <SignedOutPage afterSignOut={signedOut} />;
  }
  if (staleOrg || (me.loading && me.failure)) {
    return (
      <main class="gate" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }
  if (me.failure?.error === "no_organization") return <FirstOrganization onCreated={me.reload} />;
  if (me.failure) {
    return (
      <main class="gate">
        <h1>The console cannot start</h1>
        <ErrorBanner failure={me.failure} />
        <button type="button" onClick={me.reload}>
          Try again
        </button>
      </main>
    );
  }
  if (!me.data || !modeSettled) {
    return (
      <main class="gate" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }
  const actor = me.data.actor;
  const who = actor.type === "user" ? (actor.email ?? actor.subject) : actor.name;
  return <Shell org={me.data.orgName} who={who} onSignedOut={() => setSignedOut(true)} />;
}

function Shell({ org, who, onSignedOut }: { org: string; who: string; onSignedOut: () => void }) {
  const { mode, orgId } = useSettings();
  const path = useRoutePath();
  const found = match(routes, path);
  const Page = found?.page ?? NotFoundPage;
  const section = path.split("/")[0] ?? "";
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // On a route change, focus moves to the new page, as a page load would move it.
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [path]);
  return (
    <div class={mode === "test" ? "shell test-mode" : "shell"}>
      <header class="top">
        <div class="identity">
          <a class="brand" href={href("")}>
            Agent Risk console
          </a>
          <span class="org">{org}</span>
        </div>
        <nav aria-label="Console">
          <ul>
            {NAV.map((item) => (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={section === item.path ? "page" : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="controls">
          <ModeSwitch />
          <span class="muted who">{who}</span>
          <SignOut onSignedOut={onSignedOut} />
        </div>
      </header>
      {mode === "test" ? <p class="test-banner">Test mode: you are viewing test data.</p> : null}
      <main id="main" tabIndex={-1} ref={main}>
        {/* A new mode or organization is another data set: the page loads afresh. */}
        <Page key={`${mode}|${orgId ?? ""}|${path}`} params={found?.params ?? []} />
      </main>
    </div>
  );
}

function SignOut({ onSignedOut }: { onSignedOut: () => void }) {
  const [failure, setFailure] = useState<Failure>();
  const signOut = async () => {
    // No CSRF cookie: the session cookie expired with it, so there is nothing left to clear.
    if (!csrfToken()) {
      location.hash = "/";
      forgetOrg();
      onSignedOut();
      return;
    }
    try {
      const response = await fetch("/console/auth/logout", {
        method: "POST",
        credentials: "same-origin",
        headers: consoleHeaders(),
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as Partial<Failure>;
        setFailure({
          status: response.status,
          error: body.error ?? "sign_out_failed",
          details: body.details,
        });
        return;
      }
      location.hash = "/";
      // The organization picked is this user's choice, not the next user's on this browser.
      forgetOrg();
      onSignedOut();
    } catch (error) {
      setFailure(failureOf(error));
    }
  };
  return (
    <>
      <button type="button" onClick={signOut}>
        Sign out
      </button>
      <ErrorBanner failure={failure} />
    </>
  );
}

/**
 * First sign-in: the user has no organization yet. The console creates it (POST /v1/orgs,
 * named by the server from the user's email) and asks GET /v1/me again, now as its owner. No
 * reload: the page stays, so nothing in flight on it is cut off.
 */
function FirstOrganization({ onCreated }: { onCreated: () => void }) {
  const [failure, setFailure] = useState<Failure>();
  useEffect(() => {
    api
      .POST("/v1/orgs", { body: {} })
      .then(onCreated, (error: unknown) => setFailure(failureOf(error)));
  }, [onCreated]);
  return (
    <main class="gate" aria-busy={!failure}>
      <h1>Setting up your organization</h1>
      {failure ? <ErrorBanner failure={failure} /> : <p>Creating your organization…</p>}
    </main>
  );
}
