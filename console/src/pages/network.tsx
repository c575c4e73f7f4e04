import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction, useApiCall, useSettings } from "../api";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { when } from "../format";

type Settings = components["schemas"]["NetworkSettings"];
type Change = { contribute: boolean; consume: boolean };

/**
 * `#/network`: whether this organization shares and reads network fraud signals in the mode
 * the switch shows (docs/network.md): what is shared and what never is, the two switches, and
 * a confirmation before either changes. Owners and admins change them; others read them.
 */
export function NetworkPage(_: { params: string[] }) {
  const { mode } = useSettings();
  const settings = useApiCall(async () => (await api.GET("/v1/network-settings")).data, []);
  const me = useApiCall(async () => (await api.GET("/v1/me")).data, []);
  const canChange = me.data?.scopes.includes("network:write") ?? false;
  return (
    <>
      <h1>Network signals</h1>
      <p>
        A payee, an agent key or a credential issuer confirmed in fraud at other organizations is a
        warning here too. Each organization chooses, per mode, whether it takes part. This page
        shows {mode} mode (the switch above); test mode only ever meets test mode.
      </p>
      <ErrorBanner failure={settings.failure ?? me.failure} />
      {settings.data && me.data && (
        <Switches settings={settings.data} canChange={canChange} onChanged={settings.reload} />
      )}
      <Explanation />
    </>
  );
}

function Switches({
  settings,
  canChange,
  onChanged,
}: {
  settings: Settings;
  canChange: boolean;
  onChanged: () => void;
}) {
  const mode = settings.livemode ? "live" : "test";
  const [proposed, setProposed] = useState<Change>();
  const [notice, setNotice] = useState("");
  const { busy, error, run } = useAction();

  const apply = (change: Change) =>
    run(async () => {
      await api.POST("/v1/network-settings", { body: change });
      setProposed(undefined);
      setNotice(
        change.contribute
          ? `This organization now contributes in ${mode} mode${change.consume ? " and reads the network's counts" : ""}.`
          : `This organization left the network in ${mode} mode; what it contributed is deleted.`,
      );
      onChanged();
    });

  return (
    <section aria-labelledby="network-settings" class="panel">
      <h2 id="network-settings">Settings ({mode} mode)</h2>
      {settings.excluded && (
        <p role="note" class="error-banner">
          An operator excluded this organization from the network in {mode} mode: its contributions
          do not count and it reads nothing, whatever is set here.
        </p>
      )}
      <p>
        <label class="choice">
          <input
            type="checkbox"
            role="switch"
            checked={proposed?.contribute ?? settings.contribute}
            aria-checked={proposed?.contribute ?? settings.contribute}
            disabled={!canChange || busy || proposed !== undefined}
            onChange={(event) => {
              setNotice("");
              const contribute = event.currentTarget.checked;
              setProposed({ contribute, consume: contribute && settings.consume });
            }}
          />
          Contribute this mode's payments and fraud labels
        </label>
      </p>
      {settings.contribute && !settings.excluded && (
        <p class="help" id="contributed-through">
          {settings.contributed_through
            ? `In the network: everything recorded before ${when(settings.contributed_through)}.`
            : "Joined: the first contribution is under way."}
        </p>
      )}
      <p>
        <label class="choice">
          <input
            type="checkbox"
            role="switch"
            checked={proposed?.consume ?? settings.consume}
            aria-checked={proposed?.consume ?? settings.consume}
            aria-describedby="consume-help"
            disabled={!canChange || busy || proposed !== undefined || !settings.contribute}
            onChange={(event) => {
              setNotice("");
              setProposed({ contribute: true, consume: event.currentTarget.checked });
            }}
          />
          Read the network's counts in assessments
        </label>
      </p>
      <p id="consume-help" class="help">
        Only an organization that contributes reads: turn on contributing first.
        {settings.updated_at ? ` Last changed ${when(settings.updated_at)}.` : " Off until set."}
      </p>
      {!canChange && (
        <p class="help">
          Only an owner or an admin of this organization can change these settings.
        </p>
      )}
      {proposed && (
        <Confirm
          legend="Confirm the network change"
          showLegend
          action={confirmLabel(settings, proposed)}
          danger={!proposed.contribute}
          busy={busy}
          onConfirm={() => void apply(proposed)}
          onCancel={() => setProposed(undefined)}
        >
          {consequence(settings, proposed, mode)}
        </Confirm>
      )}
      {notice && <p role="status">{notice}</p>}
      <ErrorBanner failure={error} />
    </section>
  );
}

function confirmLabel(settings: Settings, proposed: Change): string {
  if (!proposed.contribute) return "Leave the network";
  if (!settings.contribute) return "Start contributing";
  return proposed.consume ? "Start reading" : "Stop reading";
}

function consequence(settings: Settings, proposed: Change, mode: string): string {
  if (!proposed.contribute) {
    return (
      `Everything this organization contributed in ${mode} mode is deleted at once, and ` +
      "assessments stop reading the network's counts. Joining again contributes the last 180 " +
      "days anew."
    );
  }
  if (!settings.contribute) {
    return (
      `Keyed digests of the payees, agent keys, issuers and instruments of this organization's ` +
      `${mode}-mode payments of the last 180 days, and of the ones to come, with the days they ` +
      "were seen and confirmed fraud or legitimate, will count in other organizations' " +
      "network counts. No amount, name, id or personal data leaves this organization."
    );
  }
  return proposed.consume
    ? `Assessments in ${mode} mode will read how many other organizations confirmed fraud on the payment's payee, agent key, issuer and instrument this month.`
    : `Assessments in ${mode} mode will stop reading the network's counts; this organization still contributes.`;
}

function Explanation() {
  return (
    <section aria-labelledby="network-shared" class="panel">
      <h2 id="network-shared">What is shared, and what never is</h2>
      <ul>
        <li>
          <strong>Shared:</strong> for each payee, agent key, credential issuer key and payment
          instrument fingerprint of a payment, a keyed digest (HMAC-SHA-256 under the service's
          network key, which no organization holds), and per day whether this organization saw it,
          confirmed fraud on it (a <code>fraud</code> or <code>chargeback</code> label) or confirmed
          it legitimate.
        </li>
        <li>
          <strong>Never shared:</strong> this organization's name or id, the raw identifiers,
          amounts, times finer than a day, transaction ids, principals' personal data, and the
          recipients of messages and calls.
        </li>
        <li>
          <strong>What others read:</strong> counts of organizations, never records, and only where
          at least 3 other organizations contributed (their own share subtracted); below that every
          count reads 0.
        </li>
        <li>
          <strong>Poisoning:</strong> one organization moves a count by at most one per day and
          identifier, its fraud labels weigh by how often others confirm them, and an operator can
          exclude it.
        </li>
        <li>
          <strong>Retention:</strong> contributions older than 180 days age out; leaving deletes
          this organization's contributions of the mode at once.
        </li>
      </ul>
    </section>
  );
}
