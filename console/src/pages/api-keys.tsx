import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { keyScopes, LIVE_ONLY_SCOPES, SCOPE_GUIDE } from "../../../src/auth/scope-names";
import { api, useAction } from "../api";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { OneTimeSecret } from "../components/one-time-secret";
import { Table, useKeyset } from "../components/table";
import { when } from "../format";

type ApiKey = components["schemas"]["ApiKey"];
type CreatedApiKey = components["schemas"]["CreatedApiKey"];
type Scope = components["schemas"]["Scope"];

const DEFAULT_SCOPES: Scope[] = ["assess:write", "assess:read"];

/** `#/api-keys`: create a key (its plaintext shown once), list them, revoke one. */
export function ApiKeysPage(_: { params: string[] }) {
  const [created, setCreated] = useState<CreatedApiKey>();
  const [round, setRound] = useState(0);
  const keyset = useKeyset(
    async (cursor) =>
      (
        await api.GET("/v1/api-keys", {
          params: { query: { limit: 25, ...(cursor ? { cursor } : {}) } },
        })
      ).data,
    [round],
  );
  return (
    <>
      <h1>API keys</h1>
      <CreateKey
        onCreated={(key) => {
          setCreated(key);
          setRound((n) => n + 1);
        }}
      />
      {created && (
        <OneTimeSecret title={`New key “${created.name}” (${created.mode})`} value={created.key} />
      )}
      <h2>Keys</h2>
      <Table<ApiKey>
        caption="API keys, newest first"
        keyset={keyset}
        rowKey={(key) => key.id}
        empty="No API keys yet."
        columns={[
          { header: "Name", cell: (k) => k.name },
          { header: "Prefix", cell: (k) => <code>{k.prefix}…</code> },
          { header: "Mode", cell: (k) => k.mode },
          { header: "Scopes", cell: (k) => k.scopes.join(", ") },
          {
            header: "Status",
            cell: (k) => (
              <>
                <span class={`badge badge-${k.status}`}>{k.status}</span>
                {k.revoked_at && ` ${when(k.revoked_at)}`}
              </>
            ),
          },
          { header: "Created", cell: (k) => when(k.created) },
          {
            header: "Actions",
            cell: (k) => <RevokeKey apiKey={k} onRevoked={keyset.reload} />,
          },
        ]}
      />
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const [name, setName] = useState("");
  const [mode, setMode] = useState<"live" | "test">("test");
  const [scopes, setScopes] = useState<Scope[]>(DEFAULT_SCOPES);
  const { busy, error, run } = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const { data } = await api.POST("/v1/api-keys", { body: { name, mode, scopes } });
      setName("");
      onCreated(data);
    });
  };

  return (
    <section aria-labelledby="create-key" class="panel">
      <h2 id="create-key">Create a key</h2>
      <form onSubmit={submit}>
        <Field label="Name" id="key-name">
          {(id) => (
            <input
              id={id}
              type="text"
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </Field>
        <fieldset class="field">
          <legend>Mode</legend>
          {(["test", "live"] as const).map((value) => (
            <label key={value} class="choice">
              <input
                type="radio"
                name="key-mode"
                value={value}
                checked={mode === value}
                aria-describedby={`key-mode-${value}-hint`}
                onChange={() => {
                  setMode(value);
                  // A test key is never given a scope it could not use.
                  if (value === "test")
                    setScopes(scopes.filter((s) => !LIVE_ONLY_SCOPES.includes(s)));
                }}
              />{" "}
              {value === "test" ? "Test" : "Live"}
            </label>
          ))}
          <ul class="muted mode-hints">
            <li id="key-mode-test-hint">
              <strong>Test</strong> (<code>aar_test_…</code>): assesses and reads test data only,
              never billed, never seen by live traffic. It cannot change what both modes share
              (agents, policies, issuers): those need a live key or the console.
            </li>
            <li id="key-mode-live-hint">
              <strong>Live</strong> (<code>aar_live_…</code>): real traffic, billed; it can also
              change what both modes share.
            </li>
          </ul>
        </fieldset>
        <ScopeChoices mode={mode} checked={scopes} onChange={setScopes} />
        <ErrorBanner failure={error} />
        <button type="submit" class="primary" disabled={busy || scopes.length === 0}>
          Create key
        </button>
      </form>
    </section>
  );
}

/**
 * The scopes a key of this mode may be given, each with what it lets the key do; a test key
 * is not offered a scope whose every route is live-only (src/auth/scope-names.ts).
 */
function ScopeChoices({
  mode,
  checked,
  onChange,
}: {
  mode: "live" | "test";
  checked: Scope[];
  onChange: (checked: Scope[]) => void;
}) {
  const hidden = mode === "test" ? LIVE_ONLY_SCOPES : [];
  return (
    <fieldset class="field scope-choices">
      <legend>Scopes</legend>
      {keyScopes(mode).map((scope) => {
        const guide = SCOPE_GUIDE[scope];
        const hintId = `scope-${scope.replace(":", "-")}-hint`;
        return (
          <div key={scope} class="scope-choice">
            <label class="choice">
              <input
                type="checkbox"
                value={scope}
                checked={checked.includes(scope)}
                aria-describedby={hintId}
                onChange={(e) =>
                  onChange(
                    (e.currentTarget as HTMLInputElement).checked
                      ? [...checked, scope]
                      : checked.filter((s) => s !== scope),
                  )
                }
              />{" "}
              <code>{scope}</code>
            </label>
            <small id={hintId} class="muted">
              {guide.does}.
              {mode === "test" && guide.liveOnly && ` A test key is refused ${guide.liveOnly}.`}
            </small>
          </div>
        );
      })}
      {hidden.length > 0 && (
        <p class="muted">
          Not offered to a test key, whose every use is live-only:{" "}
          {hidden.map((scope, i) => (
            <span key={scope}>
              {i > 0 && ", "}
              <code>{scope}</code>
            </span>
          ))}
          .
        </p>
      )}
    </fieldset>
  );
}

function RevokeKey({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  const revoke = () =>
    run(async () => {
      await api.POST("/v1/api-keys/{id}/revoke", { params: { path: { id: apiKey.id } } });
      setConfirming(false);
      onRevoked();
    });
  return (
    <div class="row-actions">
      {apiKey.status === "active" && !confirming && (
        <button
          type="button"
          aria-label={`Revoke ${apiKey.name}`}
          onClick={() => setConfirming(true)}
        >
          Revoke
        </button>
      )}
      {confirming && (
        <Confirm
          legend={`Confirm revoking ${apiKey.name}`}
          action="Confirm revoke"
          danger
          busy={busy}
          onConfirm={revoke}
          onCancel={() => setConfirming(false)}
        >
          Requests with this key fail from the next one on. This cannot be undone.
        </Confirm>
      )}
      <ErrorBanner failure={error} />
    </div>
  );
}
