/** Shown when there is no session (GET /v1/me answered 401) and after signing out. */
export function SignedOutPage({ afterSignOut = false }: { afterSignOut?: boolean }) {
  return (
    <main class="gate">
      <h1>Agent Risk console</h1>
      <p>{afterSignOut ? "You are signed out." : "Sign in to see your organization's data."}</p>
      <p>
        <a class="button" href="/console/auth/login">
          Sign in
        </a>
      </p>
    </main>
  );
}
