import type { ReactNode } from "react";
import type { Formatters } from "../app/format";
import { useT } from "../i18n";

export interface TableColumn<T> {
  key: string;
  label: string;
  sort?: string;
  numeric?: boolean;
  /** Long text (names, titles, addresses) that may wrap, so that the table fits its width. */
  wrap?: boolean;
  render: (row: T) => ReactNode;
}

const cellClass = (column: { numeric?: boolean; wrap?: boolean }) =>
  [column.numeric && "numeric", column.wrap && "cell-wrap"].filter(Boolean).join(" ") || undefined;

/** A date and time in a table: on one line where there is room, else the time under the date. */
export function DateTimeCell({ iso, fmt }: { iso: string | null | undefined; fmt: Formatters }) {
  const [date, time] = fmt.dateTimeLines(iso);
  if (time === undefined) return <>{date}</>;
  return (
    <span className="date-time">
      <span>{date}</span> <span>{time}</span>
    </span>
  );
}

interface DataTableProps<T extends { id: number | string }> {
  testId: string;
  caption: string;
  columns: TableColumn<T>[];
  rows: T[];
  /** Current `order` (`field` or `-field`); headers with `sort` become buttons when `onSort` is given. */
  order?: string;
  onSort?: (order: string) => void;
  busy?: boolean;
}

/** A table that scrolls sideways on small screens, with sortable headers. */
export function DataTable<T extends { id: number | string }>({
  testId,
  caption,
  columns,
  rows,
  order,
  onSort,
  busy,
}: DataTableProps<T>) {
  const descending = order?.startsWith("-") ?? false;
  const orderField = order?.replace(/^-/, "");
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <section className="table-scroll" tabIndex={0} aria-label={caption}>
      <table className="table" data-testid={testId} aria-busy={busy || undefined}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const sorted = column.sort !== undefined && column.sort === orderField;
              const ariaSort = sorted ? (descending ? "descending" : "ascending") : undefined;
              return (
                <th
                  key={column.key}
                  scope="col"
                  aria-sort={ariaSort}
                  className={column.numeric ? "numeric" : undefined}
                >
                  {column.sort && onSort ? (
                    <button
                      type="button"
                      className="sort-button"
                      data-sort={column.sort}
                      onClick={() => onSort(sorted && !descending ? `-${column.sort}` : (column.sort as string))}
                    >
                      {column.label}
                      <span className="sort-indicator" aria-hidden="true">
                        {sorted ? (descending ? "▼" : "▲") : "↕"}
                      </span>
                    </button>
                  ) : (
                    column.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} data-id={row.id}>
              {columns.map((column) => (
                <td key={column.key} className={cellClass(column)}>
                  {column.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Pagination({
  offset,
  limit,
  count,
  onPage,
  format,
}: {
  offset: number;
  limit: number;
  count: number;
  onPage: (offset: number) => void;
  format: (value: number) => string;
}) {
  const t = useT();
  const first = count === 0 ? 0 : Math.min(offset + 1, count);
  const last = Math.min(offset + limit, count);
  return (
    <nav className="pagination" aria-label={t("panel.pagination.label")}>
      <p className="pagination-range" data-testid="pagination-range" aria-live="polite">
        {count === 0
          ? t("panel.pagination.no_results")
          : t("panel.pagination.range", { first: format(first), last: format(last), count: format(count) })}
      </p>
      <div className="pagination-buttons">
        <button
          type="button"
          className="button"
          disabled={offset === 0}
          onClick={() => onPage(Math.max(0, offset - limit))}
          data-testid="page-prev"
        >
          {t("panel.pagination.previous")}
        </button>
        <button
          type="button"
          className="button"
          disabled={offset + limit >= count}
          onClick={() => onPage(offset + limit)}
          data-testid="page-next"
        >
          {t("panel.pagination.next")}
        </button>
      </div>
    </nav>
  );
}

/**
 * Newest-first pages read with a cursor: the cursors of the pages before this one are kept, so Newer
 * goes back one and Older follows the page's cursor.
 */
export function CursorPagination({
  cursors,
  setCursors,
  hasMore,
  nextCursor,
  range,
}: {
  cursors: string[];
  setCursors: (update: (previous: string[]) => string[]) => void;
  hasMore: boolean;
  nextCursor: string | null;
  range?: string;
}) {
  const t = useT();
  return (
    <nav className="pagination" aria-label={t("panel.pagination.label")}>
      {range !== undefined && (
        <p className="pagination-range" data-testid="pagination-range" aria-live="polite">
          {range}
        </p>
      )}
      <div className="pagination-buttons">
        <button
          type="button"
          className="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors((previous) => previous.slice(0, -1))}
          data-testid="page-prev"
        >
          {t("panel.pagination.newer")}
        </button>
        <button
          type="button"
          className="button"
          disabled={!hasMore}
          onClick={() => nextCursor && setCursors((previous) => [...previous, nextCursor])}
          data-testid="page-next"
        >
          {t("panel.pagination.older")}
        </button>
      </div>
    </nav>
  );
}
