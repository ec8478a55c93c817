import type { ReactNode } from 'react';

/** One column of a DataTable: its header and how a row fills its cell. */
export interface Column<T> {
  key: string;
  header: string;
  cell: (row: T) => ReactNode;
  /** The header is read by screen readers only (an actions column). */
  hiddenHeader?: boolean;
  /** The row's name: the title of its card on a narrow screen (unlabelled, first). */
  primary?: boolean;
  /** A number: right-aligned in its column, digits of equal width. */
  numeric?: boolean;
}

function cellClass<T>(column: Column<T>): string {
  return [
    `col-${column.key}`,
    column.primary ? 'cell-primary' : '',
    column.numeric ? 'cell-numeric' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * A table of rows, the columns given as data so a page adds one by adding an entry. Below 700 px
 * it becomes a list of cards (styles.css): the primary column is the card's title, every other
 * cell is labelled with its column's header; every table of the console is one of these.
 */
export function DataTable<T>({
  label,
  rows,
  columns,
  rowKey,
  empty,
  selected,
}: {
  label: string;
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty: ReactNode;
  selected?: string;
}) {
  if (rows.length === 0) return <div className="empty">{empty}</div>;
  return (
    <div className="table-wrap">
      <table aria-label={label} className="data-table">
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.key} scope="col" className={cellClass(column)}>
                {column.hiddenHeader ? (
                  <span className="visually-hidden">{column.header}</span>
                ) : (
                  column.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            return (
              <tr key={key} aria-selected={selected === undefined ? undefined : key === selected}>
                {columns.map((column) => (
                  <td
                    key={column.key}
                    data-label={column.hiddenHeader || column.primary ? undefined : column.header}
                    className={cellClass(column)}
                  >
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
