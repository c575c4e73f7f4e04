import { DECISIONS } from "../../../src/schemas/vocabulary";

/** A decision matrix (recorded or active decision × replayed or shadow one) as a table. */
export function MatrixTable({
  matrix,
  rowLabel,
  columnLabel,
}: {
  matrix: Record<(typeof DECISIONS)[number], Record<(typeof DECISIONS)[number], number>>;
  rowLabel: string;
  columnLabel: string;
}) {
  return (
    <div class="table-scroll">
      <table class="matrix">
        <caption>
          {rowLabel} decision (rows) against {columnLabel.toLowerCase()} (columns)
        </caption>
        <thead>
          <tr>
            <th scope="col">
              {rowLabel} ↓ / {columnLabel} →
            </th>
            {DECISIONS.map((d) => (
              <th scope="col" key={d}>
                {d}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {DECISIONS.map((from) => (
            <tr key={from}>
              <th scope="row">{from}</th>
              {DECISIONS.map((to) => (
                <td key={to} class={from === to ? "same" : "changed"}>
                  {matrix[from][to]}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
