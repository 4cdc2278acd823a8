// The list every settings page shows (repositories, certificates, GnuPG keys, clusters, tokens):
// a table of the API's items, each row with its buttons and a Delete that asks first, then
// tells the page to load the list again. One component, so the pages differ only in their
// columns and in what Delete sends.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Json } from '../api';
import { Confirm } from './form';

/** A column: its heading and what a row shows in it. */
export type Column = [heading: string, cell: (row: Json) => ComponentChildren];

/** What Delete of a row asks and sends. */
export interface Removal {
  /** The button's accessible name (the visible text is "Delete"). */
  label: (row: Json) => string;
  title: string;
  question: (row: Json) => ComponentChildren;
  /** The request; the list is loaded again after it. */
  send: (row: Json) => Promise<unknown>;
}

export function ItemTable({
  testid,
  rows,
  columns,
  rowKey,
  rowData,
  remove,
  actions,
  empty,
  onChanged,
}: {
  testid: string;
  /** null while loading: nothing is drawn (the page says it loads). */
  rows: Json[] | null;
  columns: Column[];
  rowKey: (row: Json) => string;
  /** The row's `data-*` attributes, by which tests and scripts find it. */
  rowData: (row: Json) => Record<string, string | undefined>;
  remove: Removal;
  /** Buttons before Delete. */
  actions?: (row: Json) => ComponentChildren;
  empty: string;
  onChanged: () => void;
}) {
  const [deleting, setDeleting] = useState<Json | null>(null);
  if (rows === null) return null;
  return (
    <>
      {rows.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <table class="table" data-testid={testid}>
          <thead>
            <tr>
              {columns.map(([h]) => (
                <th key={h}>{h}</th>
              ))}
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const data = Object.fromEntries(Object.entries(rowData(r)).filter(([, v]) => v !== undefined).map(([k, v]) => [`data-${k}`, v]));
              return (
                <tr key={rowKey(r)} {...data}>
                  {columns.map(([h, cell]) => (
                    <td key={h}>{cell(r)}</td>
                  ))}
                  <td>
                    <div class="row-actions">
                      {actions?.(r)}
                      <button type="button" class="btn danger" aria-label={remove.label(r)} onClick={() => setDeleting(r)}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {deleting && (
        <Confirm
          title={remove.title}
          body={<p>{remove.question(deleting)}</p>}
          action="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await remove.send(deleting);
            onChanged();
          }}
        />
      )}
    </>
  );
}

/** Items sorted by a text key, for a deterministic order whatever the server answers. */
export const sortBy = (items: Json[] | null, key: (x: Json) => string): Json[] | null => (items ? [...items].sort((a, b) => key(a).localeCompare(key(b))) : null);
