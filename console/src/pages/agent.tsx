import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, currentMode, useAction, useApiCall } from "../api";
import { TrustChart } from "../components/chart";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { shortId, when } from "../format";

type AgentKey = components["schemas"]["AgentKey"];
type TrustEvent = components["schemas"]["TrustEvent"];

/** Trust events drawn at most: the newest pages of the history. */
const HISTORY_PAGES = 4;

/** `#/agents/<id>`: the agent, its trust history (chart and table), keys and Agent Card. */
export function AgentPage({ params }: { params: string[] }) {
  const id = params[0] ?? "";
  const agent = useApiCall(
    async () => (await api.GET("/v1/agents/{id}", { params: { path: { id } } })).data,
    [id],
  );
  // Bumped when a key moves: the trust history has a new event then.
  const [round, setRound] = useState(0);
  const a = agent.data;
  return (
    <>
      <p>
        <a href="#/agents">← Agents</a>
      </p>
      <h1>{a ? a.name : "Agent"}</h1>
      <ErrorBanner failure={agent.failure} />
      {a && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`badge badge-${a.status}`}>{a.status}</span>
            </dd>
            <dt>Trust score</dt>
            <dd>{a.trust_score}</dd>
            <dt>Risk tier</dt>
            <dd>{a.risk_tier}</dd>
            <dt>Principal</dt>
            <dd>
              <code>{a.principal_id}</code>
            </dd>
            <ModeCounts id={id} />
            <dt>Trust evidence</dt>
            <dd>
              {a.evidence.approvals} approvals / {a.evidence.reviews} reviews / {a.evidence.denials}{" "}
              denials <span class="muted">(live assessments that proved the agent's key)</span>
            </dd>
            <dt>Confirmed fraud / legitimate</dt>
            <dd>
              {a.evidence.confirmed_frauds} / {a.evidence.confirmed_legitimate}
            </dd>
            <dt>Created</dt>
            <dd>{when(a.created)}</dd>
            <dt>Id</dt>
            <dd>
              <code>{a.id}</code>
            </dd>
          </dl>
          {a.description && <p>{a.description}</p>}
          <TrustHistory id={id} round={round} />
          <Keys
            id={id}
            revoked={a.status === "revoked"}
            onChanged={() => {
              agent.reload();
              setRound((n) => n + 1);
            }}
          />
          <CardStatus id={id} />
        </>
      )}
    </>
  );
}

/** The reader's time zone: the twelve months counted end with their today. */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** 365 days before today, as a local date: with today, the longest window a summary reads. */
function yearAgo(): string {
  const day = new Date();
  day.setDate(day.getDate() - 365);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

/**
 * The agent's assessments of the mode the console shows (GET /v1/assessments/summary?agent=),
 * by decision as recorded. Not the trust evidence below it, which counts live assessments
 * that proved the agent's key only: test traffic never moves live trust.
 */
function ModeCounts({ id }: { id: string }) {
  const mode = currentMode();
  const summary = useApiCall(
    async () =>
      (
        await api.GET("/v1/assessments/summary", {
          params: { query: { agent: id, from: yearAgo(), tz: ZONE } },
        })
      ).data,
    [id],
  );
  const t = summary.data?.totals;
  return (
    <>
      <dt>Assessments, {mode} mode</dt>
      <dd data-testid="agent-mode-counts">
        {t
          ? `${t.approve} approve / ${t.review} review / ${t.deny} deny`
          : summary.failure
            ? "—"
            : "…"}{" "}
        <span class="muted">(in {mode} mode, the last 12 months)</span>
        <ErrorBanner failure={summary.failure} />
      </dd>
    </>
  );
}

function TrustHistory({ id, round }: { id: string; round: number }) {
  const history = useApiCall(async () => {
    const events: TrustEvent[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < HISTORY_PAGES; page++) {
      const { data } = await api.GET("/v1/agents/{id}/trust-history", {
        params: { path: { id }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      });
      events.push(...data.data);
      if (!data.has_more || !data.next_cursor) return { events, more: false };
      cursor = data.next_cursor;
    }
    return { events, more: true };
  }, [id, round]);
  const events = history.data?.events ?? [];
  return (
    <section aria-labelledby="trust-heading" class="panel">
      <h2 id="trust-heading">Trust history</h2>
      <ErrorBanner failure={history.failure} />
      {history.data && (
        <>
          <TrustChart
            label={`Trust score over time, ${events.length} events`}
            points={events.map((e) => ({
              time: Date.parse(e.created) / 1000,
              score: e.trust_score,
            }))}
          />
          {history.data.more && <p>The chart shows the newest {events.length} events.</p>}
          <details>
            <summary>Events ({events.length})</summary>
            <div class="table-scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Score</th>
                    <th scope="col">Tier</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {events.map((e) => (
                    <tr key={e.id}>
                      <td>{when(e.created)}</td>
                      <td>{e.reason}</td>
                      <td>
                        {e.previous_score === null ? "" : `${e.previous_score} → `}
                        {e.trust_score}
                      </td>
                      <td>{e.risk_tier}</td>
                      <td>{e.status}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  );
}

function Keys({ id, revoked, onChanged }: { id: string; revoked: boolean; onChanged: () => void }) {
  const keys = useApiCall(
    async () =>
      (await api.GET("/v1/agents/{id}/keys", { params: { path: { id }, query: { limit: 100 } } }))
        .data,
    [id],
  );
  const [jwk, setJwk] = useState("");
  const { busy, error, setError, run } = useAction();
  const changed = () => {
    keys.reload();
    onChanged();
  };

  const add = (event: Event) => {
    event.preventDefault();
    setError(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(jwk);
    } catch (caught) {
      setError({
        error: "invalid_json",
        details: [{ path: "jwk", message: (caught as Error).message }],
      });
      return;
    }
    void run(async () => {
      await api.POST("/v1/agents/{id}/keys", {
        params: { path: { id } },
        body: { jwk: parsed as Record<string, unknown> },
      });
      setJwk("");
      changed();
    });
  };

  return (
    <section aria-labelledby="keys-heading" class="panel">
      <h2 id="keys-heading">Keys</h2>
      <ErrorBanner failure={keys.failure} />
      {keys.data && keys.data.data.length === 0 && <p>No keys registered.</p>}
      {keys.data && keys.data.data.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Thumbprint</th>
                <th scope="col">Algorithm</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((key) => (
                <KeyRow key={key.id} agentId={id} agentKey={key} onRevoked={changed} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!revoked && (
        <form onSubmit={add}>
          <Field label="Public key (JWK: Ed25519, P-256 or RSA ≥ 2048)" id="agent-jwk">
            {(fieldId) => (
              <textarea
                id={fieldId}
                rows={4}
                spellcheck={false}
                placeholder='{"kty":"OKP","crv":"Ed25519","x":"…"}'
                value={jwk}
                onInput={(e) => setJwk((e.currentTarget as HTMLTextAreaElement).value)}
              />
            )}
          </Field>
          <ErrorBanner failure={error} />
          <button type="submit" disabled={busy || jwk.trim() === ""}>
            Add key
          </button>
        </form>
      )}
    </section>
  );
}

function KeyRow({
  agentId,
  agentKey,
  onRevoked,
}: {
  agentId: string;
  agentKey: AgentKey;
  onRevoked: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  const revoke = () =>
    run(async () => {
      await api.POST("/v1/agents/{id}/keys/{keyId}/revoke", {
        params: { path: { id: agentId, keyId: agentKey.id } },
      });
      setConfirming(false);
      onRevoked();
    });
  const short = shortId(agentKey.id);
  return (
    <tr>
      <td>
        <code title={agentKey.id}>{short}</code>
      </td>
      <td>
        {agentKey.alg} ({agentKey.kty}
        {agentKey.crv ? ` ${agentKey.crv}` : ""})
      </td>
      <td>
        <span class={`badge badge-${agentKey.status}`}>{agentKey.status}</span>
      </td>
      <td>{when(agentKey.created)}</td>
      <td>
        {agentKey.status === "active" && !confirming && (
          <button
            type="button"
            aria-label={`Revoke key ${short}`}
            onClick={() => setConfirming(true)}
          >
            Revoke
          </button>
        )}
        {confirming && (
          <Confirm
            legend={`Confirm revoking key ${short}`}
            action="Confirm revoke"
            danger
            busy={busy}
            onConfirm={revoke}
            onCancel={() => setConfirming(false)}
          >
            The key never verifies anything again; it cannot be registered again.
          </Confirm>
        )}
        <ErrorBanner failure={error} />
      </td>
    </tr>
  );
}

function CardStatus({ id }: { id: string }) {
  const card = useApiCall(
    async () => (await api.GET("/v1/agents/{id}/card-status", { params: { path: { id } } })).data,
    [id],
  );
  const c = card.data;
  return (
    <section aria-labelledby="card-heading" class="panel">
      <h2 id="card-heading">Agent Card</h2>
      <ErrorBanner failure={card.failure} />
      {c && (
        <>
          <p>
            Status:{" "}
            <strong class={`badge badge-${c.status}`} data-testid="card-status">
              {c.status}
            </strong>
            {c.verified_at && ` since ${when(c.verified_at)}`}
          </p>
          <dl class="facts">
            <dt>Name</dt>
            <dd>{c.name ?? "—"}</dd>
            <dt>Service URL</dt>
            <dd>{c.url ?? "—"}</dd>
            <dt>Fetched from</dt>
            <dd>{c.source_url ?? "—"}</dd>
            <dt>Protocol version</dt>
            <dd>{c.protocol_version ?? "—"}</dd>
            <dt>Digest</dt>
            <dd>{c.digest ? <code>{c.digest}</code> : "—"}</dd>
            <dt>Last checked</dt>
            <dd>{when(c.checked_at)}</dd>
          </dl>
          {c.reasons.length > 0 && (
            <>
              <h3>Reasons</h3>
              <ul>
                {c.reasons.map((r) => (
                  <li key={`${r.code}:${r.path ?? ""}`}>
                    <code>{r.code}</code> {r.message}
                  </li>
                ))}
              </ul>
            </>
          )}
          {c.signatures.length > 0 && (
            <>
              <h3>Signatures</h3>
              <ul>
                {c.signatures.map((s) => (
                  <li key={s.index}>
                    #{s.index} {s.kid ? <code>{s.kid.slice(0, 12)}…</code> : "no kid"} {s.alg}:{" "}
                    {s.status} — {s.message}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
