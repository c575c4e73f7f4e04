import type { Failure } from "../api";

interface Issue {
  path: string;
  message: string;
}

function isIssueList(details: unknown): details is Issue[] {
  return (
    Array.isArray(details) &&
    details.every(
      (item) => typeof item === "object" && item !== null && "message" in item && "path" in item,
    )
  );
}

/**
 * The service's error envelope `{error, details}` as the page shows it: the code, and the
 * details as a list of `path: message` for validation errors, else as the service wrote them.
 * `role="alert"`: a screen reader announces it as it appears.
 */
export function ErrorBanner({ failure }: { failure: Failure | undefined }) {
  if (!failure) return null;
  const { status, error, details } = failure;
  return (
    <div class="error-banner" role="alert">
      <p>
        <strong>{error}</strong>
        {status ? <span class="muted"> (HTTP {status})</span> : null}
      </p>
      {details === undefined || details === null ? null : isIssueList(details) ? (
        <ul>
          {details.map((issue) => (
            <li key={`${issue.path}:${issue.message}`}>
              {issue.path ? <code>{issue.path}</code> : null}
              {issue.path ? ": " : ""}
              {issue.message}
            </li>
          ))}
        </ul>
      ) : typeof details === "string" ? (
        <p>{details}</p>
      ) : (
        <pre>{JSON.stringify(details, null, 2)}</pre>
      )}
    </div>
  );
}
