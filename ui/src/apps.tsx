// The Applications page: tiles or a table, filters kept in the URL (so a filtered view can be
// shared), counts per status, and live updates from the watch stream without reloads.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { canI, get, watchApplications, type Application, type Json } from './api';
import { LazyAppForm } from './appform-lazy';
import { HEALTH, HealthLabel, SYNC, SyncLabel, Time } from './status';
import { matchesSelector, readSelector } from './label-selector';
import { navigate } from './router';

export interface Filters {
  search: string;
  proj: string[];
  sync: string[];
  health: string[];
  namespace: string[];
  cluster: string[];
  labels: string;
  view: 'tiles' | 'list';
}

function readFilters(): Filters {
  const q = new URLSearchParams(location.search);
  const list = (k: string) => (q.get(k) || '').split(',').filter(Boolean);
  return {
    search: q.get('search') || '',
    proj: list('proj'),
    sync: list('sync'),
    health: list('health'),
    namespace: list('namespace'),
    cluster: list('cluster'),
    labels: q.get('labels') || '',
    view: q.get('view') === 'list' ? 'list' : 'tiles',
  };
}

function writeFilters(f: Filters) {
  const q = new URLSearchParams();
  if (f.search) q.set('search', f.search);
  for (const k of ['proj', 'sync', 'health', 'namespace', 'cluster'] as const) if (f[k].length) q.set(k, f[k].join(','));
  if (f.labels) q.set('labels', f.labels);
  if (f.view !== 'tiles') q.set('view', f.view);
  const qs = q.toString();
  history.replaceState(null, '', `/applications${qs ? `?${qs}` : ''}`);
}

export const syncStatus = (a: Application): string => a.status?.sync?.status || 'Unknown';
export const healthStatus = (a: Application): string => a.status?.health?.status || 'Unknown';
export const destCluster = (a: Application): string => a.spec?.destination?.name || a.spec?.destination?.server || '';
export const destNamespace = (a: Application): string => a.spec?.destination?.namespace || '';
export const project = (a: Application): string => a.spec?.project || 'default';

export function source(a: Application): { repoURL: string; path: string; chart: string; targetRevision: string } {
  const s = a.spec?.source ?? a.spec?.sources?.[0] ?? {};
  return { repoURL: s.repoURL || '', path: s.path || '', chart: s.chart || '', targetRevision: s.targetRevision || 'HEAD' };
}

export function lastSync(a: Application): string | undefined {
  const op = a.status?.operationState;
  if (op?.finishedAt) return op.finishedAt;
  const h = a.status?.history;
  return h?.length ? h[h.length - 1].deployedAt : undefined;
}

// The list is filtered one Application at a time: the selector is read once per change.
let lastSelector: [string, ReturnType<typeof readSelector>] = ['', { reqs: [], error: '' }];
function selectorOf(expr: string) {
  if (lastSelector[0] !== expr) lastSelector = [expr, readSelector(expr)];
  return lastSelector[1];
}

/** Whether the Application's labels match the Kubernetes label selector `expr` (an
 * unreadable selector matches nothing; the page says why). */
export function labelsMatch(a: Application, expr: string): boolean {
  const { reqs, error } = selectorOf(expr);
  return !error && matchesSelector(reqs, a.metadata.labels || {});
}

export function matches(a: Application, f: Filters): boolean {
  if (f.search) {
    const s = f.search.toLowerCase();
    const hay = `${a.metadata.name} ${source(a).repoURL} ${source(a).path} ${destNamespace(a)}`.toLowerCase();
    if (!hay.includes(s)) return false;
  }
  if (f.proj.length && !f.proj.includes(project(a))) return false;
  if (f.sync.length && !f.sync.includes(syncStatus(a))) return false;
  if (f.health.length && !f.health.includes(healthStatus(a))) return false;
  if (f.namespace.length && !f.namespace.includes(destNamespace(a))) return false;
  if (f.cluster.length && !f.cluster.includes(destCluster(a))) return false;
  if (f.labels && !labelsMatch(a, f.labels)) return false;
  return true;
}

// What the Applications page reads of each Application (Argo's `fields`): a tenth of the
// whole objects' bytes with a thousand Applications (docs/performance.md).
const APP_FIELDS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.labels',
  'metadata.resourceVersion',
  'spec',
  'status.sync.status',
  'status.health.status',
  'status.operationState.finishedAt',
];
const LIST_FIELDS = ['metadata.resourceVersion', ...APP_FIELDS.map((f) => `items.${f}`)].join(',');
const STREAM_FIELDS = ['result.type', ...APP_FIELDS.map((f) => `result.application.${f}`)].join(',');

const key = (a: Application) => `${a.metadata.namespace || ''}/${a.metadata.name}`;
export const detailsHref = (a: Application) =>
  `/applications/${encodeURIComponent(a.metadata.namespace || 'argocd')}/${encodeURIComponent(a.metadata.name)}`;

function Facet({
  label,
  values,
  selected,
  counts,
  onChange,
}: {
  label: string;
  values: string[];
  selected: string[];
  counts: Record<string, number>;
  onChange: (v: string[]) => void;
}) {
  if (!values.length) return null;
  return (
    <fieldset class="facet">
      <legend>{label}</legend>
      {values.map((v) => (
        <label key={v} class="check">
          <input
            type="checkbox"
            checked={selected.includes(v)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...selected, v] : selected.filter((x) => x !== v))}
          />
          <span class="facet-name">{v || '(none)'}</span>
          <span class="count">{counts[v] ?? 0}</span>
        </label>
      ))}
    </fieldset>
  );
}

function countBy(apps: Application[], f: (a: Application) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of apps) out[f(a)] = (out[f(a)] ?? 0) + 1;
  return out;
}

/** Whether the caller may create Applications in at least one project (as RBAC answers
 * `can-i applications create <project>/*`), and if not, why. */
function useCanCreate(): { allowed: boolean; reason: string } {
  const [state, setState] = useState({ allowed: false, reason: '' });
  useEffect(() => {
    let live = true;
    get<{ items: Json[] | null }>('/api/v1/projects')
      .then((r) => (r.items || []).map((p) => p.metadata?.name as string).filter(Boolean))
      .catch(() => [] as string[])
      .then(async (names) => {
        const list = names.length ? names : ['default'];
        const answers = await Promise.all(list.map((p) => canI('applications', 'create', `${p}/*`)));
        if (!live) return;
        const allowed = answers.some(Boolean);
        setState({ allowed, reason: allowed ? '' : `RBAC denies applications, create in every project (${list.join(', ')})` });
      });
    return () => {
      live = false;
    };
  }, []);
  return state;
}

export function AppsPage() {
  const [apps, setApps] = useState<Map<string, Application>>(new Map());
  const [creating, setCreating] = useState(false);
  const canCreate = useCanCreate();
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [live, setLive] = useState(false);
  const [filters, setFilters] = useState<Filters>(readFilters);
  // A new login after the session ended: the list and its stream start again, filters kept.
  const [session, setSession] = useState(0);
  useEffect(() => {
    const on = () => setSession((n) => n + 1);
    window.addEventListener('plumb:session', on);
    return () => window.removeEventListener('plumb:session', on);
  }, []);

  useEffect(() => writeFilters(filters), [filters]);

  useEffect(() => {
    let closed = false;
    let stop = () => {};
    // Buffer events and apply them at most every 200 ms: a burst of updates costs one render.
    let pending: [string, Application][] = [];
    let timer: number | undefined;
    const flush = () => {
      timer = undefined;
      const batch = pending;
      pending = [];
      setApps((prev) => {
        // Unchanged objects (same resourceVersion) cost no new map and no render.
        let next: Map<string, Application> | null = null;
        for (const [type, a] of batch) {
          const k = key(a);
          const old = (next ?? prev).get(k);
          if (type === 'DELETED') {
            if (!old) continue;
            next ??= new Map(prev);
            next.delete(k);
          } else if (!old || old.metadata.resourceVersion !== a.metadata.resourceVersion) {
            next ??= new Map(prev);
            next.set(k, a);
          }
        }
        return next ?? prev;
      });
    };
    /** The list (only the fields tiles show), then the stream of what changes after it. */
    const list = () =>
      get<{ metadata?: { resourceVersion?: string }; items: Application[] | null }>(`/api/v1/applications?fields=${LIST_FIELDS}`).then((r) => {
        if (!closed) {
          setApps(new Map((r.items || []).map((a) => [key(a), a])));
          setLoaded(true);
        }
        return r.metadata?.resourceVersion || '';
      });
    let dropped = false;
    list()
      .then((rv) => {
        if (closed) return;
        stop = watchApplications(
          { fields: STREAM_FIELDS, ...(rv ? { resourceVersion: rv } : {}) },
          (type, a) => {
            pending.push([type, a]);
            if (timer === undefined) timer = window.setTimeout(flush, 200);
          },
          (connected) => {
            setLive(connected);
            // Back after a dropped connection: what was deleted meanwhile is only in a new list.
            if (!connected) dropped = true;
            else if (dropped) {
              dropped = false;
              list().catch(() => {});
            }
          },
        );
      })
      .catch((e) => {
        setError(String(e.message || e));
        setLoaded(true);
      });
    setError('');
    return () => {
      closed = true;
      stop();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [session]);

  const all = useMemo(() => [...apps.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)), [apps]);
  const shown = useMemo(() => all.filter((a) => matches(a, filters)), [all, filters]);
  const set = (patch: Partial<Filters>) => setFilters({ ...filters, ...patch });
  const uniq = (f: (a: Application) => string) => [...new Set(all.map(f))].sort();
  // The namespaces of the Applications the other filters list (Argo's filter offers what the
  // list holds), and those already chosen.
  const otherwiseShown = useMemo(() => all.filter((a) => matches(a, { ...filters, namespace: [] })), [all, filters]);
  const nsOptions = [...new Set([...otherwiseShown.map(destNamespace), ...filters.namespace])].sort();
  const labelsError = filters.labels ? selectorOf(filters.labels).error : '';
  const syncCounts = countBy(all, syncStatus);
  const healthCounts = countBy(all, healthStatus);
  const anyFilter =
    filters.search || filters.labels || filters.proj.length || filters.sync.length || filters.health.length || filters.namespace.length || filters.cluster.length;

  return (
    <div class="page apps-page">
      <header class="page-head">
        <h1>Applications</h1>
        <div class="toolbar">
          <span title={canCreate.reason || undefined}>
            <button
              type="button"
              class="btn primary"
              disabled={!canCreate.allowed}
              aria-describedby={canCreate.reason ? 'why-new-app' : undefined}
              onClick={() => setCreating(true)}
            >
              + New application
            </button>
            {canCreate.reason && (
              <span id="why-new-app" class="sr-only" data-testid="denied-New">
                {canCreate.reason}
              </span>
            )}
          </span>
          <input
            type="search"
            class="search"
            placeholder="Search applications…"
            aria-label="Search applications"
            value={filters.search}
            onInput={(e) => set({ search: e.currentTarget.value })}
          />
          <div class="seg" role="group" aria-label="View">
            <button type="button" class="btn" aria-pressed={filters.view === 'tiles'} onClick={() => set({ view: 'tiles' })}>
              Tiles
            </button>
            <button type="button" class="btn" aria-pressed={filters.view === 'list'} onClick={() => set({ view: 'list' })}>
              List
            </button>
          </div>
          <span class={`live ${live ? 'on' : ''}`} title={live ? 'Receiving live updates' : 'Live updates disconnected; reconnecting'}>
            {live ? '● Live' : '○ Offline'}
          </span>
        </div>
      </header>
      <div class="apps-layout">
        <aside class="filters" aria-label="Filters">
          <div class="summary" data-testid="summary">
            <div>
              <strong>{shown.length}</strong> of {all.length} applications
            </div>
            {anyFilter ? (
              <button
                type="button"
                class="btn link"
                onClick={() => setFilters({ ...filters, search: '', labels: '', proj: [], sync: [], health: [], namespace: [], cluster: [] })}
              >
                Clear filters
              </button>
            ) : null}
          </div>
          {/* Labels first, as in Argo's filter: long facets below must not push it out of view. */}
          <label class="facet">
            <span class="legend">Labels</span>
            <input
              placeholder="team=payments,tier"
              aria-label="Label selector"
              value={filters.labels}
              onInput={(e) => set({ labels: e.currentTarget.value })}
              aria-invalid={labelsError ? true : undefined}
              aria-describedby={labelsError ? 'labels-error' : undefined}
            />
            {labelsError && (
              <span class="field-error" id="labels-error" data-testid="labels-error" role="status">
                {labelsError}
              </span>
            )}
          </label>
          <Facet label="Sync status" values={[...SYNC]} selected={filters.sync} counts={syncCounts} onChange={(v) => set({ sync: v })} />
          <Facet label="Health status" values={[...HEALTH]} selected={filters.health} counts={healthCounts} onChange={(v) => set({ health: v })} />
          <Facet label="Projects" values={uniq(project)} selected={filters.proj} counts={countBy(all, project)} onChange={(v) => set({ proj: v })} />
          <Facet label="Clusters" values={uniq(destCluster)} selected={filters.cluster} counts={countBy(all, destCluster)} onChange={(v) => set({ cluster: v })} />
          <Facet
            label="Namespaces"
            values={nsOptions}
            selected={filters.namespace}
            counts={countBy(otherwiseShown, destNamespace)}
            onChange={(v) => set({ namespace: v })}
          />
        </aside>
        <section class="apps-main" aria-label="Applications">
          <div class="status-bar" aria-label="Counts per status">
            {(['Synced', 'OutOfSync'] as const).map((s) => (
              <button
                type="button"
                key={s}
                class="pill"
                aria-pressed={filters.sync.length === 1 && filters.sync[0] === s}
                onClick={() => set({ sync: filters.sync.length === 1 && filters.sync[0] === s ? [] : [s] })}
              >
                <SyncLabel status={s} /> <span class="count">{syncCounts[s] ?? 0}</span>
              </button>
            ))}
            {(['Healthy', 'Progressing', 'Degraded', 'Missing', 'Suspended'] as const).map((s) => (
              <button
                type="button"
                key={s}
                class="pill"
                aria-pressed={filters.health.length === 1 && filters.health[0] === s}
                onClick={() => set({ health: filters.health.length === 1 && filters.health[0] === s ? [] : [s] })}
              >
                <HealthLabel status={s} /> <span class="count">{healthCounts[s] ?? 0}</span>
              </button>
            ))}
          </div>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          {!loaded && <p class="muted">Loading applications…</p>}
          {loaded && !error && all.length === 0 && (
            <div class="empty card">
              <h2>No applications yet</h2>
              <p>
                Create one with <code>plumb app create</code> or <code>kubectl apply</code> an Application manifest; it appears here at once.
              </p>
            </div>
          )}
          {loaded && all.length > 0 && shown.length === 0 && <p class="muted">No applications match the filters.</p>}
          {filters.view === 'tiles' ? <Tiles apps={shown} /> : <Table apps={shown} />}
        </section>
      </div>
      {creating && (
        <LazyAppForm
          onClose={() => setCreating(false)}
          onSaved={(a) => {
            setCreating(false);
            navigate(detailsHref(a));
          }}
        />
      )}
    </div>
  );
}

// Only the tiles (and table rows) near the viewport are in the DOM: with a thousand
// Applications, drawing every tile cost most of the first load. Tiles and rows have a fixed
// height, so the rows to draw follow from the scroll position; spacers keep the scroll height.
// Tab still walks every tile: focus scrolls the next tile into view, which draws the rows
// around it. (The search box finds what is not drawn.)
export const TILE_H = 268;
export const TILE_GAP = 12;
const TILE_MIN_W = 300;
export const ROW_H = 37;
const OVERSCAN_PX = 600;

/** The rows of a list of `count` rows of `pitch` px whose top is `ref` that intersect the
 * viewport (plus some margin), recomputed on scroll and resize. */
function useWindow(ref: { current: HTMLElement | null }, pitch: number, count: number): [number, number] {
  const compute = (): [number, number] => {
    const el = ref.current;
    const top = el ? el.getBoundingClientRect().top : 0;
    const first = Math.max(0, Math.floor((-top - OVERSCAN_PX) / pitch));
    const last = Math.min(count, Math.ceil((window.innerHeight - top + OVERSCAN_PX) / pitch));
    return [first, Math.max(first, last)];
  };
  const [range, setRange] = useState<[number, number]>(() => compute());
  useLayoutEffect(() => {
    let frame = 0;
    const update = () => {
      frame = 0;
      const next = compute();
      setRange((r) => (r[0] === next[0] && r[1] === next[1] ? r : next));
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(update);
    };
    update();
    // Capture: the page scrolls in whichever element holds it.
    window.addEventListener('scroll', schedule, { capture: true, passive: true });
    window.addEventListener('resize', schedule);
    return () => {
      window.removeEventListener('scroll', schedule, { capture: true });
      window.removeEventListener('resize', schedule);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [pitch, count]);
  return range;
}

/** The number of tile columns that fit the list's width (as `repeat(auto-fill, minmax(300px, 1fr))`). */
function useColumns(ref: { current: HTMLElement | null }): number {
  const fit = (w: number) => Math.max(1, Math.floor((w + TILE_GAP) / (TILE_MIN_W + TILE_GAP)));
  const [cols, setCols] = useState(() => fit(Math.max(320, window.innerWidth - 460)));
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setCols(fit(el.clientWidth));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return cols;
}

function Tiles({ apps }: { apps: Application[] }) {
  const ref = useRef<HTMLUListElement>(null);
  const cols = useColumns(ref);
  const rows = Math.ceil(apps.length / cols);
  const pitch = TILE_H + TILE_GAP;
  const [first, last] = useWindow(ref, pitch, rows);
  const shown = apps.slice(first * cols, last * cols);
  return (
    <ul
      class="tiles"
      ref={ref}
      data-count={apps.length}
      style={{
        gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))`,
        paddingTop: `${first * pitch}px`,
        height: `${Math.max(0, rows * pitch - TILE_GAP)}px`,
      }}
    >
      {shown.map((a) => (
        <Tile key={key(a)} a={a} />
      ))}
    </ul>
  );
}

function Tile({ a }: { a: Application }) {
  const s = source(a);
  const labels = a.metadata.labels ? Object.entries(a.metadata.labels) : [];
  return (
    <li class={`tile h-${healthStatus(a)} s-${syncStatus(a)}`} data-testid="app-tile" data-app={a.metadata.name}>
      <a class="tile-title" href={detailsHref(a)}>
        {a.metadata.name}
      </a>
      <dl>
        <dt>Project</dt>
        <dd>{project(a)}</dd>
        <dt>Labels</dt>
        <dd class="labels" title={labels.map(([k, v]) => `${k}=${v}`).join(', ')}>
          {labels.length ? (
            labels.map(([k, v]) => (
              <span class="tag" key={k}>
                {k}={v}
              </span>
            ))
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Status</dt>
        <dd class="tile-status">
          <HealthLabel status={healthStatus(a)} /> <SyncLabel status={syncStatus(a)} />
        </dd>
        <dt>Repository</dt>
        <dd title={s.repoURL}>{s.repoURL}</dd>
        <dt>Target</dt>
        <dd>{s.targetRevision}</dd>
        <dt>{s.chart ? 'Chart' : 'Path'}</dt>
        <dd>{s.chart || s.path || '.'}</dd>
        <dt>Destination</dt>
        <dd title={destCluster(a)}>
          {a.spec?.destination?.name || (destCluster(a) === 'https://kubernetes.default.svc' ? 'in-cluster' : destCluster(a))}
        </dd>
        <dt>Namespace</dt>
        <dd>{destNamespace(a)}</dd>
        <dt>Last sync</dt>
        <dd>
          <Time t={lastSync(a)} />
        </dd>
      </dl>
    </li>
  );
}

function Table({ apps }: { apps: Application[] }) {
  const ref = useRef<HTMLTableSectionElement>(null);
  const [first, last] = useWindow(ref, ROW_H, apps.length);
  return (
    <table class="table apps-table" data-count={apps.length}>
      <colgroup>
        <col class="c-name" />
        <col class="c-project" />
        <col class="c-health" />
        <col class="c-sync" />
        <col class="c-repo" />
        <col class="c-target" />
        <col class="c-dest" />
        <col class="c-last" />
      </colgroup>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Project</th>
          <th scope="col">Health</th>
          <th scope="col">Sync</th>
          <th scope="col">Repository</th>
          <th scope="col">Target</th>
          <th scope="col">Destination</th>
          <th scope="col">Last sync</th>
        </tr>
      </thead>
      <tbody ref={ref}>
        {first > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${first * ROW_H}px` }} />}
        {apps.slice(first, last).map((a) => {
          const s = source(a);
          return (
            <tr key={key(a)} data-testid="app-row" data-app={a.metadata.name} onDblClick={() => navigate(detailsHref(a))}>
              <td title={a.metadata.name}>
                <a href={detailsHref(a)}>{a.metadata.name}</a>
              </td>
              <td title={project(a)}>{project(a)}</td>
              <td>
                <HealthLabel status={healthStatus(a)} />
              </td>
              <td>
                <SyncLabel status={syncStatus(a)} />
              </td>
              <td class="ellipsis" title={`${s.repoURL} ${s.chart || s.path || ''}`.trim()}>
                {s.repoURL} <span class="muted">{s.chart || s.path}</span>
              </td>
              <td title={s.targetRevision}>{s.targetRevision}</td>
              <td title={destNamespace(a)}>
                {destNamespace(a)} <span class="muted">{a.spec?.destination?.name || ''}</span>
              </td>
              <td title={lastSync(a) || 'never'}>
                <Time t={lastSync(a)} />
              </td>
            </tr>
          );
        })}
        {last < apps.length && <tr class="spacer" aria-hidden="true" style={{ height: `${(apps.length - last) * ROW_H}px` }} />}
      </tbody>
    </table>
  );
}
