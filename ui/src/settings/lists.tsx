// A project's lists (destinations, sources, resource allow and deny lists...), each described
// once (its columns, what a row needs, what an unset and an empty list mean) and edited in one
// dialog: rows to add, change and remove, then the whole project is saved (`PUT`).
import { useEffect, useRef } from 'preact/hooks';
import { FormDialog, FieldError, useForm, type Errors } from './form';
import type { Json } from '../api';

export interface Col {
  key: string;
  label: string;
  placeholder?: string;
}

export interface ListDef {
  /** The spec field (`orphanedResources.ignore` is a path). */
  field: string;
  label: string;
  cols: Col[];
  /** A list of strings rather than of objects (the one column is the string). */
  scalar?: boolean;
  /** What an absent list means, and an explicit empty one where it differs (Argo treats an
   * empty `namespaceResourceWhitelist` as "none", an unset one as "all"). */
  unset: string;
  empty?: string;
  check?: (row: Json) => Errors;
}

const gk = (what: string): Col[] => [
  { key: 'group', label: 'Group', placeholder: `${what}: * or apps, '' for core` },
  { key: 'kind', label: 'Kind', placeholder: '* or Deployment' },
];
const needKind = (r: Json): Errors => ({ kind: r.kind ? '' : 'A kind (or *) is required.' });

export const LISTS: ListDef[] = [
  { field: 'sourceRepos', label: 'Source repositories', scalar: true, cols: [{ key: 'value', label: 'Repository URL', placeholder: '* or https://github.com/org/*' }], unset: 'none: no repository is permitted', check: (r) => ({ value: r.value ? '' : 'A repository URL or pattern is required.' }) },
  {
    field: 'destinations',
    label: 'Destinations',
    cols: [
      { key: 'server', label: 'Server', placeholder: 'https://kubernetes.default.svc or *' },
      { key: 'name', label: 'Name', placeholder: 'in-cluster (instead of server)' },
      { key: 'namespace', label: 'Namespace', placeholder: '* or payments-*' },
    ],
    unset: 'none: no destination is permitted',
    check: (r) => ({
      server: !r.server && !r.name ? 'A server or a cluster name is required.' : r.server && r.name ? 'A server or a name, not both.' : '',
      namespace: r.namespace ? '' : 'A namespace (or *) is required.',
    }),
  },
  { field: 'sourceNamespaces', label: 'Source namespaces', scalar: true, cols: [{ key: 'value', label: 'Namespace', placeholder: 'team-*' }], unset: 'none (only the control namespace)', check: (r) => ({ value: r.value ? '' : 'A namespace is required.' }) },
  // Argo's ClusterResourceRestrictionItem has a name pattern: a column of its own, so that saving
  // the list never drops it (an entry without its name would permit the whole kind).
  { field: 'clusterResourceWhitelist', label: 'Cluster resources allowed', cols: [...gk('allowed'), { key: 'name', label: 'Name', placeholder: 'app-* (empty: every object)' }], unset: 'none: no cluster-scoped kind is permitted', check: needKind },
  { field: 'clusterResourceBlacklist', label: 'Cluster resources denied', cols: [...gk('denied'), { key: 'name', label: 'Name', placeholder: 'cluster-admin (empty: every object)' }], unset: 'none', check: needKind },
  {
    field: 'namespaceResourceWhitelist',
    label: 'Namespace resources allowed',
    cols: gk('allowed'),
    unset: 'all namespaced kinds (the list is unset)',
    empty: 'none: the list is empty, no namespaced kind is permitted',
    check: needKind,
  },
  { field: 'namespaceResourceBlacklist', label: 'Namespace resources denied', cols: gk('denied'), unset: 'none', check: needKind },
  {
    field: 'orphanedResources.ignore',
    label: 'Orphaned resources ignored',
    cols: [...gk('ignored'), { key: 'name', label: 'Name', placeholder: 'name or pattern' }],
    unset: 'none',
    check: needKind,
  },
  { field: 'signatureKeys', label: 'Signature keys', cols: [{ key: 'keyID', label: 'GnuPG key ID', placeholder: '4AEE18F83AFDEB23' }], unset: 'none: commits need no signature', check: (r) => ({ keyID: /^[0-9A-Fa-f]{16}$/.test(r.keyID || '') ? '' : 'A key ID is 16 hexadecimal digits.' }) },
  {
    field: 'destinationServiceAccounts',
    label: 'Destination service accounts',
    cols: [
      { key: 'server', label: 'Server', placeholder: 'https://kubernetes.default.svc' },
      { key: 'namespace', label: 'Namespace', placeholder: '*' },
      { key: 'defaultServiceAccount', label: 'Service account', placeholder: 'ns:sa or sa' },
    ],
    unset: 'none (syncs use the controller’s own account)',
    check: (r) => ({ server: r.server ? '' : 'A server URL (or pattern) is required.', defaultServiceAccount: r.defaultServiceAccount ? '' : 'A service account is required.' }),
  },
];

/** The list in a spec (absent: undefined), as rows of objects. */
export function readList(spec: Json, def: ListDef): Json[] | undefined {
  const v = def.field.split('.').reduce((o, k) => (o == null ? o : o[k]), spec);
  if (!Array.isArray(v)) return undefined;
  return def.scalar ? v.map((x) => ({ value: x })) : v;
}

/** The spec with the list replaced (`rows` undefined: the list is removed). */
export function writeList(spec: Json, def: ListDef, rows: Json[] | undefined): Json {
  const out = structuredClone(spec || {});
  const path = def.field.split('.');
  const last = path.pop()!;
  let o = out;
  for (const k of path) o = o[k] ??= {};
  const clean = rows?.map((r) =>
    def.scalar
      ? String(r.value).trim()
      : {
          // Fields the editor has no column for (such as a resource entry's `name`) are kept.
          ...Object.fromEntries(Object.entries(r).filter(([k]) => !def.cols.some((c) => c.key === k))),
          ...Object.fromEntries(
            def.cols
              .map((c) => [c.key, String(r[c.key] ?? '').trim()])
              // An empty group is the core API group: kept; other empty columns are left out.
              .filter(([k, v]) => v !== '' || k === 'group'),
          ),
        },
  );
  if (clean === undefined) delete o[last];
  else o[last] = clean;
  return out;
}

export function describe(def: ListDef, row: Json): string {
  if (def.scalar) return row.value;
  if (def.field === 'destinations') return `${row.name || row.server || '*'} → ${row.namespace || '*'}`;
  if (def.cols[0].key === 'group') return `${row.group || '(core)'}/${row.kind}${row.name ? ` ${row.name}` : ''}`;
  return def.cols.map((c) => row[c.key] || '*').join(' → ');
}

/** A row's fields the editor has no column for: shown, kept as they are. */
function Kept({ def, row }: { def: ListDef; row: Json }) {
  const extra = Object.entries(row).filter(([k, v]) => !def.cols.some((c) => c.key === k) && v !== '' && v != null);
  if (def.scalar || !extra.length) return null;
  return (
    <span class="muted kept" data-testid="kept">
      {extra.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')} (kept)
    </span>
  );
}

/** The dialog editing one list; `save` gets the new rows (undefined: unset the list). */
export function ListEditor({ def, rows, onClose, save }: { def: ListDef; rows: Json[] | undefined; onClose: () => void; save: (rows: Json[] | undefined) => Promise<void> }) {
  const form = useForm<{ rows: Json[]; keepEmpty: boolean }>({ rows: rows ? rows.map((r) => ({ ...r })) : [], keepEmpty: rows !== undefined && rows.length === 0 });
  const list = form.values.rows;
  const setRows = (r: Json[]) => form.set('rows', r);
  // A row added from the keyboard gets the focus once it is drawn.
  const added = useRef(false);
  useEffect(() => {
    if (added.current) document.getElementById(`f-rows.${list.length - 1}.${def.cols[0].key}`)?.focus();
    added.current = false;
  }, [list.length]);
  const edit = (i: number, k: string, v: string) => {
    setRows(list.map((r, j) => (j === i ? { ...r, [k]: v } : r)));
    form.setErrors((old) => ({ ...old, [`rows.${i}.${k}`]: '' }));
  };
  const validate = (v: { rows: Json[] }): Errors => {
    const e: Errors = {};
    v.rows.forEach((r, i) => Object.entries(def.check?.(r) || {}).forEach(([k, m]) => m && (e[`rows.${i}.${k}`] = m)));
    return e;
  };
  return (
    <FormDialog
      title={`Edit ${def.label.toLowerCase()}`}
      form={form}
      onClose={onClose}
      submitLabel="Save"
      wide
      testid="list-form"
      onSubmit={() =>
        form.submit(validate, (v) => save(v.rows.length ? v.rows : def.empty && v.keepEmpty ? [] : undefined), [['rows', /./]])
      }
    >
      <fieldset data-list={def.field}>
        <legend>{def.label}</legend>
        {list.length === 0 && <p class="muted">{def.empty && form.values.keepEmpty ? def.empty : def.unset}</p>}
        {list.map((r, i) => (
          <div class="row-edit" key={i} data-row={i}>
            {def.cols.map((c) => {
              const name = `rows.${i}.${c.key}`;
              const err = form.errors[name];
              return (
                <div class="field" key={c.key}>
                  <label for={`f-${name}`}>{c.label}</label>
                  <input
                    id={`f-${name}`}
                    value={r[c.key] ?? ''}
                    placeholder={c.placeholder}
                    spellcheck={false}
                    autoComplete="off"
                    onInput={(e) => edit(i, c.key, e.currentTarget.value)}
                    {...(err ? { 'aria-invalid': true, 'aria-describedby': `err-${name}` } : {})}
                  />
                  <FieldError form={form} name={name} />
                </div>
              );
            })}
            <Kept def={def} row={r} />
            <button type="button" class="btn ghost" aria-label={`Remove row ${i + 1}`} onClick={() => setRows(list.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <FieldError form={form} name="rows" />
        <div class="form-actions">
          <button
            type="button"
            class="btn"
            onClick={() => {
              added.current = true;
              setRows([...list, def.scalar ? { value: '' } : {}]);
            }}
          >
            Add {def.cols.length === 1 ? def.cols[0].label.toLowerCase() : 'row'}
          </button>
          {def.empty && list.length === 0 && (
            <label class="check">
              <input type="checkbox" checked={form.values.keepEmpty} onChange={(e) => form.set('keepEmpty', e.currentTarget.checked)} />
              Keep an empty list ({def.empty.split(':')[0]})
            </label>
          )}
        </div>
      </fieldset>
    </FormDialog>
  );
}
