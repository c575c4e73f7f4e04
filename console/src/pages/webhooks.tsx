import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { EVENT_TYPES } from "../../../src/schemas/vocabulary";
import { api, useAction, useApiCall } from "../api";
import { Checkboxes } from "../components/checkboxes";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { OneTimeSecret } from "../components/one-time-secret";
import { Table, useKeyset } from "../components/table";
import { when } from "../format";

type Endpoint = components["schemas"]["WebhookEndpoint"];
type EventType = Endpoint["event_types"][number];
type Delivery = components["schemas"]["WebhookDelivery"];

/** `#/webhooks`: the endpoints of the current mode, their deliveries, create and rotate. */
export function WebhooksPage(_: { params: string[] }) {
  const [secret, setSecret] = useState<{ title: string; value: string }>();
  const [selected, setSelected] = useState<string>();
  const list = useApiCall(
    async () =>
      (await api.GET("/v1/webhook-endpoints", { params: { query: { limit: 100 } } })).data,
    [],
  );
  return (
    <>
      <h1>Webhooks</h1>
      <CreateEndpoint
        onCreated={(endpoint) => {
          setSecret({ title: `Signing secret of ${endpoint.url}`, value: endpoint.secret });
          list.reload();
        }}
      />
      {secret && <OneTimeSecret title={secret.title} value={secret.value} />}
      <h2>Endpoints</h2>
      <p>Endpoints receive the events of the mode they were created in (the switch above).</p>
      <ErrorBanner failure={list.failure} />
      {list.data && (
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">Webhook endpoints, newest first</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((endpoint) => (
                <EndpointRow
                  key={endpoint.id}
                  endpoint={endpoint}
                  selected={selected === endpoint.id}
                  onSelect={() => setSelected(endpoint.id)}
                  onSecret={(value) =>
                    setSecret({ title: `New signing secret of ${endpoint.url}`, value })
                  }
                  onChanged={list.reload}
                />
              ))}
              {list.data.data.length === 0 && (
                <tr>
                  <td colSpan={5}>No endpoints in this mode.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
      {selected && list.data?.data.some((e) => e.id === selected) && (
        <Deliveries
          key={selected}
          endpoint={list.data.data.find((e) => e.id === selected) as Endpoint}
        />
      )}
    </>
  );
}

function CreateEndpoint({
  onCreated,
}: {
  onCreated: (endpoint: components["schemas"]["CreatedWebhookEndpoint"]) => void;
}) {
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [types, setTypes] = useState<EventType[]>([]);
  const { busy, error, run } = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const { data } = await api.POST("/v1/webhook-endpoints", {
        body: {
          url,
          event_types: types,
          ...(description.trim() ? { description: description.trim() } : {}),
        },
      });
      setUrl("");
      setDescription("");
      setTypes([]);
      onCreated(data);
    });
  };

  return (
    <section aria-labelledby="create-endpoint" class="panel">
      <h2 id="create-endpoint">Add an endpoint</h2>
      <form onSubmit={submit}>
        <Field label="URL (https)" id="endpoint-url">
          {(id) => (
            <input
              id={id}
              type="url"
              required
              placeholder="https://example.com/hooks/agent-risk"
              value={url}
              onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </Field>
        <Field label="Description (optional)" id="endpoint-description">
          {(id) => (
            <input
              id={id}
              type="text"
              maxLength={500}
              value={description}
              onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </Field>
        <Checkboxes
          legend="Events (none checked: every event)"
          options={EVENT_TYPES}
          checked={types}
          onChange={setTypes}
        />
        <ErrorBanner failure={error} />
        <button type="submit" class="primary" disabled={busy}>
          Add endpoint
        </button>
      </form>
    </section>
  );
}

function EndpointRow({
  endpoint,
  selected,
  onSelect,
  onSecret,
  onChanged,
}: {
  endpoint: Endpoint;
  selected: boolean;
  onSelect: () => void;
  onSecret: (secret: string) => void;
  onChanged: () => void;
}) {
  const [confirm, setConfirm] = useState<"" | "rotate" | "delete">("");
  const action = useAction();
  const { busy, error } = action;

  const run = (call: () => Promise<void>) =>
    action.run(async () => {
      await call();
      setConfirm("");
      onChanged();
    });
  const path = { params: { path: { id: endpoint.id } } };

  return (
    <tr class={selected ? "selected" : undefined}>
      <td>
        <code>{endpoint.url}</code>
        {endpoint.description && <div>{endpoint.description}</div>}
      </td>
      <td>{endpoint.event_types.length === 0 ? "all" : endpoint.event_types.join(", ")}</td>
      <td>
        {endpoint.status}
        {endpoint.previous_secret_expires_at &&
          ` (previous secret signs until ${when(endpoint.previous_secret_expires_at)})`}
      </td>
      <td>{when(endpoint.created)}</td>
      <td>
        <div class="row-actions">
          <button type="button" aria-pressed={selected} onClick={onSelect}>
            Deliveries<span class="visually-hidden"> of {endpoint.url}</span>
          </button>{" "}
          {confirm === "" && (
            <>
              <button type="button" onClick={() => setConfirm("rotate")}>
                Rotate secret<span class="visually-hidden"> of {endpoint.url}</span>
              </button>{" "}
              <button type="button" onClick={() => setConfirm("delete")}>
                Delete<span class="visually-hidden"> {endpoint.url}</span>
              </button>
            </>
          )}
          {confirm === "rotate" && (
            <Confirm
              legend="Confirm the rotation"
              action="Confirm rotation"
              busy={busy}
              onConfirm={() =>
                run(async () => {
                  const { data } = await api.POST("/v1/webhook-endpoints/{id}/rotate-secret", {
                    ...path,
                    body: { expires_in: 86_400 },
                  });
                  onSecret(data.secret);
                })
              }
              onCancel={() => setConfirm("")}
            >
              A new secret signs from now on; the current one also signs for 24 hours.
            </Confirm>
          )}
          {confirm === "delete" && (
            <Confirm
              legend="Confirm the deletion"
              action="Confirm delete"
              danger
              busy={busy}
              onConfirm={() =>
                run(async () => {
                  await api.DELETE("/v1/webhook-endpoints/{id}", path);
                })
              }
              onCancel={() => setConfirm("")}
            >
              Pending deliveries are cancelled; the records stay.
            </Confirm>
          )}
          <ErrorBanner failure={error} />
        </div>
      </td>
    </tr>
  );
}

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const keyset = useKeyset(
    async (cursor) =>
      (
        await api.GET("/v1/webhook-endpoints/{id}/deliveries", {
          params: {
            path: { id: endpoint.id },
            query: { limit: 25, ...(cursor ? { cursor } : {}) },
          },
        })
      ).data,
    [endpoint.id],
  );
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries to {endpoint.url}</h2>
      <p>
        <button type="button" onClick={keyset.reload} disabled={keyset.loading}>
          Refresh deliveries
        </button>
      </p>
      <Table<Delivery>
        caption="Deliveries, newest first, each with its attempts"
        keyset={keyset}
        rowKey={(d) => d.id}
        empty="No deliveries yet."
        columns={[
          { header: "Event", cell: (d) => <code>{d.event.type}</code> },
          {
            header: "Status",
            cell: (d) => <span class={`badge badge-${d.status}`}>{d.status}</span>,
          },
          { header: "Attempts", cell: (d) => <Attempts delivery={d} /> },
          { header: "Created", cell: (d) => when(d.created) },
          { header: "Next attempt", cell: (d) => when(d.next_attempt_at) },
        ]}
      />
    </section>
  );
}

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <>none yet</>;
  return (
    <details>
      <summary>
        {delivery.attempt_count} {delivery.attempt_count === 1 ? "attempt" : "attempts"}
      </summary>
      <ol>
        {delivery.attempts.map((attempt) => (
          <li key={attempt.number}>
            {when(attempt.time)}:{" "}
            {attempt.status_code === null ? "no answer" : `HTTP ${attempt.status_code}`} in{" "}
            {attempt.duration_ms} ms
            {attempt.error && ` (${attempt.error})`}
          </li>
        ))}
      </ol>
    </details>
  );
}
