import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { type Loaded, useApiCall } from "../api";
import { ErrorBanner } from "./error-banner";

/** A page of a list endpoint: `{ data, has_more, next_cursor }`. */
export interface ListPage<Row> {
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ComponentChildren;
  /** The cell's tooltip (the exact time behind a relative one, say). */
  title?: (row: Row) => string | undefined;
}

export interface Keyset<Row> extends Loaded<ListPage<Row>> {
  /** 1 for the first page. */
  page: number;
  next: (() => void) | undefined;
  previous: (() => void) | undefined;
}

/**
 * Keyset paging over a list endpoint: `load(cursor)` fetches one page; the cursors of the
 * pages before are kept, so "Previous page" goes back without offsets. A change in `deps` (a
 * filter) starts again at the first page.
 */
export function useKeyset<Row>(
  load: (cursor: string | undefined) => Promise<ListPage<Row>>,
  deps: unknown[],
): Keyset<Row> {
  const [cursors, setCursors] = useState<{ key: string; list: (string | undefined)[] }>({
    key: "",
    list: [undefined],
  });
  const key = JSON.stringify(deps);
  const list = cursors.key === key ? cursors.list : [undefined];
  const cursor = list[list.length - 1];
  const loaded = useApiCall(() => load(cursor), [key, cursor]);
  const nextCursor = loaded.data?.has_more ? loaded.data.next_cursor : null;
  return {
    ...loaded,
    page: list.length,
    next:
      nextCursor && !loaded.loading
        ? () => setCursors({ key, list: [...list, nextCursor] })
        : undefined,
    previous:
      list.length > 1 && !loaded.loading
        ? () => setCursors({ key, list: list.slice(0, -1) })
        : undefined,
  };
}

/**
 * A list as a table, with its paging buttons and its error, if the page failed. A table a
 * person works through (the review queue) marks its `selected` row (`aria-current`), takes a
 * `class` of its own and is described by the element `describedBy` names (its keys).
 */
export function Table<Row>({
  caption,
  columns,
  rowKey,
  keyset,
  empty = "Nothing here yet.",
  selected,
  class: extraClass,
  describedBy,
}: {
  caption: string;
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  keyset: Keyset<Row>;
  empty?: string;
  selected?: (row: Row) => boolean;
  class?: string;
  describedBy?: string;
}) {
  const rows = keyset.data?.data ?? [];
  return (
    <div class={extraClass ? `table-block ${extraClass}` : "table-block"}>
      <ErrorBanner failure={keyset.failure} />
      <div class="table-scroll">
        <table class="stack" aria-busy={keyset.loading} aria-describedby={describedBy}>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column.header} scope="col">
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const current = selected?.(row) ?? false;
              return (
                <tr
                  key={rowKey(row)}
                  class={current ? "selected" : undefined}
                  aria-current={current ? "true" : undefined}
                >
                  {columns.map((column) => (
                    <td key={column.header} data-label={column.header} title={column.title?.(row)}>
                      {column.cell(row)}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {!keyset.loading && !keyset.failure && rows.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : null}
      <div class="pager">
        <button type="button" onClick={keyset.previous} disabled={!keyset.previous}>
          Previous page
        </button>
        <span class="muted">Page {keyset.page}</span>
        <button type="button" onClick={keyset.next} disabled={!keyset.next}>
          Next page
        </button>
      </div>
    </div>
  );
}
