/**
 * What the network of opted-in organizations knew of an assessment's identifiers when it was
 * made (`outcome.network`, docs/network.md): per identifier, how many other organizations
 * confirmed fraud on it and how many confirmed it legitimate in the window. Absent when the
 * organization did not read the network in that mode.
 */
import type { components } from "@agent-risk/client";
import { href } from "../router";

type Network = components["schemas"]["NetworkOutcome"];

const IDENTIFIERS = [
  { key: "payee", label: "Payee" },
  { key: "agent_key", label: "Agent key" },
  { key: "issuer", label: "Credential issuer key" },
  { key: "instrument", label: "Payment instrument" },
] as const;

export function NetworkPanel({ network }: { network: Network | undefined }) {
  return (
    <section class="panel" aria-labelledby="network">
      <h2 id="network">Network</h2>
      {network ? (
        <>
          <table>
            <caption>
              Other organizations, over the {network.window_days} days to this assessment
            </caption>
            <thead>
              <tr>
                <th scope="col">Identifier</th>
                <th scope="col">Confirmed fraud</th>
                <th scope="col">Confirmed legitimate</th>
              </tr>
            </thead>
            <tbody>
              {IDENTIFIERS.map(({ key, label }) => {
                const fraud = network[`${key}_fraud_orgs`];
                return (
                  <tr key={key}>
                    <th scope="row">{label}</th>
                    <td>{fraud > 0 ? <strong>{fraud}</strong> : fraud}</td>
                    <td>{network[`${key}_legitimate_orgs`]}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p class="muted">
            A count is shown only when at least {network.k} other organizations sent something about
            that identifier; below that it reads 0. This organization is never counted.
          </p>
        </>
      ) : (
        <p class="muted">
          This organization did not read the network's counts in this mode when it was assessed (
          <a href={href("network")}>network settings</a>).
        </p>
      )}
    </section>
  );
}
