// The side panel of one object of the tree: Summary, Live manifest, Desired manifest, Diff
// (inline or side by side, with who last changed each drifted field), Events, and Logs for Pods
// and the workloads above them.
import { useEffect, useState } from 'preact/hooks';
import { diffLines } from 'diff';
import { compactParts } from './diff-compact';
import YAML from 'yaml';
import { ApiError, appPath, get, request, type Json, type ResourceDiff } from './api';
import { HealthLabel, SyncLabel, Time } from './status';
import type { TreeItem } from './tree';
import { hasLogs, LogsView } from './logs';

const parse = (text?: string): Json => {
  if (!text || text === 'null') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export const toYaml = (obj: Json): string => (obj == null ? '' : YAML.stringify(obj, { lineWidth: 0 }));

/** Fields the API server manages: noise in a manifest someone reads (Argo's UI hides them too). */
function withoutManagedFields(obj: Json): Json {
  if (!obj || !obj.metadata) return obj;
  const copy = { ...obj, metadata: { ...obj.metadata } };
  delete copy.metadata.managedFields;
  return copy;
}

interface Change {
  path: string;
  op: string;
  live?: Json;
  desired?: Json;
  attribution?: { manager: string; operation: string; time: string; exact: boolean } | null;
}

function changesOf(d?: ResourceDiff): Change[] {
  const parsed = parse(d?.diff);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((x: Json) => (Array.isArray(x.changes) ? x.changes : []));
}

const ALL_TABS = ['Summary', 'Live manifest', 'Desired manifest', 'Diff', 'Events', 'Logs'] as const;
type Tab = (typeof ALL_TABS)[number];

export function ResourcePanel({
  app,
  ns,
  item,
  diffs,
  initialTab,
  onClose,
}: {
  app: string;
  ns: string;
  item: TreeItem;
  diffs: ResourceDiff[] | null;
  initialTab?: string;
  onClose: () => void;
}) {
  const TABS: readonly Tab[] = hasLogs(item) ? ALL_TABS : ALL_TABS.filter((t) => t !== 'Logs');
  const [tab, setTab] = useState<Tab>(() => (TABS as readonly string[]).includes(initialTab || '') ? (initialTab as Tab) : 'Summary');
  const [events, setEvents] = useState<Json[] | null>(null);
  const [eventsError, setEventsError] = useState('');
  const [mode, setMode] = useState<'inline' | 'split'>('inline');
  const d = diffs?.find((x) => x.kind === item.kind && x.name === item.name && (x.namespace || '') === (item.namespace || '') && (x.group || '') === (item.group || ''));
  const managed = !!item.managed;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  useEffect(() => {
    if (tab !== 'Events' && tab !== 'Summary') return;
    const q: Record<string, string> = item.root ? {} : { resourceNamespace: item.namespace, resourceName: item.name };
    if (item.node?.uid) q.resourceUID = item.node.uid;
    setEventsError('');
    get(appPath(app, ns, '/events', q))
      .then((r) => setEvents(r?.items || []))
      .catch((e) => {
        // Said, not hidden: "No events." would claim something the server never answered.
        setEventsError((e as Error).message);
        setEvents([]);
      });
  }, [tab, item.id]);

  // Objects the Application does not manage (ReplicaSets, Pods...) are read one by one through
  // Argo's `GET .../resource` (a node of the tree only; Secrets masked by the server).
  const [fetchedLive, setFetchedLive] = useState<{ id: string; obj: Json; error: string } | null>(null);
  const needLive = tab === 'Live manifest' && !(d && parse(d.liveState)) && !item.root && (!managed || diffs !== null);
  useEffect(() => {
    if (!needLive || fetchedLive?.id === item.id) return;
    get<{ manifest: string }>(appPath(app, ns, '/resource', resourceQuery(item)))
      .then((r) => setFetchedLive({ id: item.id, obj: parse(r.manifest), error: '' }))
      .catch((e) => setFetchedLive({ id: item.id, obj: null, error: e instanceof ApiError && e.status === 404 ? '' : (e as Error).message }));
  }, [needLive, item.id]);
  const fromRoute = fetchedLive?.id === item.id ? fetchedLive : null;
  const live = withoutManagedFields(parse(d?.liveState) ?? fromRoute?.obj ?? null);
  const desired = parse(d?.targetState);
  const changes = changesOf(d);

  return (
    <aside class="panel" aria-labelledby="panel-title" data-testid="resource-panel">
      <header class="panel-head">
        <div>
          <div class="muted">{item.kind}</div>
          <h2 id="panel-title">{item.name}</h2>
        </div>
        <button type="button" class="btn ghost" aria-label="Close panel" onClick={onClose}>
          ✕
        </button>
      </header>
      <div class="tabs" role="tablist" aria-label="Object views">
        {TABS.map((t) => (
          <button
            type="button"
            role="tab"
            key={t}
            id={`tab-${t}`}
            aria-selected={tab === t}
            aria-controls="panel-body"
            class="tab"
            onClick={() => setTab(t)}
            onKeyDown={(e) => {
              const i = TABS.indexOf(t);
              if (e.key === 'ArrowRight') setTab(TABS[(i + 1) % TABS.length]);
              if (e.key === 'ArrowLeft') setTab(TABS[(i + TABS.length - 1) % TABS.length]);
            }}
          >
            {t}
          </button>
        ))}
      </div>
      <div class="panel-body" id="panel-body" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'Summary' && (
          <dl class="fields">
            <dt>Kind</dt>
            <dd>
              {item.group ? `${item.group}/` : ''}
              {item.kind}
            </dd>
            <dt>Name</dt>
            <dd>{item.name}</dd>
            {item.namespace && (
              <>
                <dt>Namespace</dt>
                <dd>{item.namespace}</dd>
              </>
            )}
            {item.node?.createdAt && (
              <>
                <dt>Created</dt>
                <dd>
                  <Time t={item.node.createdAt} />
                </dd>
              </>
            )}
            {item.sync && (
              <>
                <dt>Sync status</dt>
                <dd>
                  <SyncLabel status={item.sync} />
                  {item.managed?.requiresPruning ? ' (requires pruning)' : ''}
                </dd>
              </>
            )}
            {item.health && (
              <>
                <dt>Health</dt>
                <dd>
                  <HealthLabel status={item.health} />
                  {item.healthMessage && <div class="muted">{item.healthMessage}</div>}
                </dd>
              </>
            )}
            {item.node?.images && item.node.images.length > 0 && (
              <>
                <dt>Images</dt>
                <dd>
                  {item.node.images.map((i) => (
                    <div key={i}>
                      <code>{i}</code>
                    </div>
                  ))}
                </dd>
              </>
            )}
            {item.managed?.hook && (
              <>
                <dt>Hook</dt>
                <dd>yes</dd>
              </>
            )}
            {item.managed?.syncWave !== undefined && (
              <>
                <dt>Sync wave</dt>
                <dd>{item.managed.syncWave}</dd>
              </>
            )}
            <dt>Events</dt>
            <dd>{events === null ? 'Loading…' : eventsError ? 'could not be read (see Events)' : events.length ? `${events.length} (see Events)` : 'none'}</dd>
          </dl>
        )}
        {tab === 'Summary' && !item.root && <ActionsView app={app} ns={ns} item={item} />}
        {tab === 'Live manifest' &&
          (live ? (
            <pre class="manifest" aria-label="Live manifest">
              {toYaml(live)}
            </pre>
          ) : (
            <p class="muted">
              {fromRoute?.error
                ? fromRoute.error
                : (managed && diffs === null) || (needLive && !fromRoute)
                  ? 'Loading…'
                  : 'The object does not exist in the cluster.'}
            </p>
          ))}
        {tab === 'Desired manifest' &&
          (desired ? (
            <pre class="manifest" aria-label="Desired manifest">
              {toYaml(desired)}
            </pre>
          ) : (
            <p class="muted">{managed ? (diffs === null ? 'Loading…' : 'Not in Git: the object is extra in the cluster.') : 'Not managed by the Application: it has no desired state.'}</p>
          ))}
        {tab === 'Diff' && (
          <DiffView d={d} loading={managed && diffs === null} changes={changes} mode={mode} setMode={setMode} />
        )}
        {tab === 'Logs' && TABS.includes('Logs') && <LogsView app={app} ns={ns} item={item} />}
        {tab === 'Events' &&
          (events === null ? (
            <p class="muted">Loading…</p>
          ) : eventsError ? (
            <p class="error" role="alert">
              Events could not be read: {eventsError}
            </p>
          ) : events.length === 0 ? (
            <p class="muted">No events.</p>
          ) : (
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Message</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {newestFirst(events).map((e, i) => (
                  <tr key={i}>
                    <td>{e.type}</td>
                    <td>{e.reason}</td>
                    <td>{e.message}</td>
                    <td>
                      <Time t={eventTime(e) || undefined} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
      </div>
    </aside>
  );
}

/** When an event was last seen (Argo's UI orders events by it, newest first). */
export const eventTime = (e: Json): string => e.lastTimestamp || e.eventTime || e.metadata?.creationTimestamp || '';
export function newestFirst(events: Json[]): Json[] {
  const t = (e: Json) => Date.parse(eventTime(e)) || 0;
  return [...events].sort((a, b) => t(b) - t(a));
}

function DiffView({
  d,
  loading,
  changes,
  mode,
  setMode,
}: {
  d?: ResourceDiff;
  loading: boolean;
  changes: Change[];
  mode: 'inline' | 'split';
  setMode: (m: 'inline' | 'split') => void;
}) {
  const [compact, setCompact] = useState(false);
  if (loading) return <p class="muted">Loading…</p>;
  if (!d) return <p class="muted">No desired state to compare with: the object is not managed by the Application.</p>;
  const liveText = toYaml(withoutManagedFields(parse(d.normalizedLiveState) ?? parse(d.liveState)));
  const desiredText = toYaml(withoutManagedFields(parse(d.predictedLiveState) ?? parse(d.targetState)));
  const full = diffLines(liveText, desiredText);
  const parts = compact ? compactParts(full) : full;
  // Argo's ResourceDiff says `modified: false` for a live object Git no longer declares (and
  // the server follows it): that is not "no drift" but an object a sync with Prune deletes.
  const extra = !!liveText && !desiredText;
  const absent = !liveText && !!desiredText;
  const drift = !!d.modified || extra || absent;
  return (
    <div class="diff" data-testid="diff">
      {extra && (
        <p class="notice" data-testid="diff-prune">
          Not in Git any more: a sync with Prune deletes this object (every line below is removed).
        </p>
      )}
      {absent && <p class="notice">Not in the cluster: a sync creates this object.</p>}
      {!drift && <p class="ok">No drift: the live object matches the desired state.</p>}
      {changes.length > 0 && (
        <table class="table changes" aria-label="Changed fields">
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Live</th>
              <th scope="col">Desired</th>
              <th scope="col">Last changed by</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr key={c.path}>
                <td>
                  <code>{c.path}</code> <span class="muted">{c.op}</span>
                </td>
                <td>
                  <code>{c.live === undefined || c.live === null ? '—' : JSON.stringify(c.live)}</code>
                </td>
                <td>
                  <code>{c.desired === undefined || c.desired === null ? '—' : JSON.stringify(c.desired)}</code>
                </td>
                <td data-testid="attribution">
                  {c.attribution ? (
                    <>
                      <strong>{c.attribution.manager}</strong> <span class="muted">({c.attribution.operation})</span>{' '}
                      <Time t={c.attribution.time} />
                      {!c.attribution.exact && <span class="muted"> (nearest parent)</span>}
                    </>
                  ) : (
                    <span class="muted">not recorded</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {drift && (
        <>
          <div class="seg" role="group" aria-label="Diff layout">
            <button type="button" class="btn" aria-pressed={mode === 'inline'} onClick={() => setMode('inline')}>
              Inline
            </button>
            <button type="button" class="btn" aria-pressed={mode === 'split'} onClick={() => setMode('split')}>
              Side by side
            </button>
            <label class="check compact-toggle">
              <input type="checkbox" checked={compact} onChange={(e) => setCompact(e.currentTarget.checked)} /> Compact diff
            </label>
          </div>
          {mode === 'inline' ? (
            <pre class="manifest diff-inline" aria-label="Diff, live to desired">
              {parts.map((p, i) =>
                p.value
                  .replace(/\n$/, '')
                  .split('\n')
                  .map((line, j) => (
                    <div key={`${i}-${j}`} class={p.added ? 'add' : p.removed ? 'del' : 'same'}>
                      {p.added ? '+ ' : p.removed ? '- ' : '  '}
                      {line}
                    </div>
                  )),
              )}
            </pre>
          ) : (
            <div class="diff-split">
              <div>
                <h3>Live</h3>
                <pre class="manifest">
                  {parts
                    .filter((p) => !p.added)
                    .map((p, i) => (
                      <div key={i} class={p.removed ? 'del' : 'same'}>
                        {p.value.replace(/\n$/, '')}
                      </div>
                    ))}
                </pre>
              </div>
              <div>
                <h3>Desired</h3>
                <pre class="manifest">
                  {parts
                    .filter((p) => !p.removed)
                    .map((p, i) => (
                      <div key={i} class={p.added ? 'add' : 'same'}>
                        {p.value.replace(/\n$/, '')}
                      </div>
                    ))}
                </pre>
              </div>
            </div>
          )}
        </>
      )}
    </div>
  );
}

/** Argo's `ApplicationResourceRequest` fields naming one object of the tree. */
function resourceQuery(item: TreeItem): Record<string, string> {
  return {
    namespace: item.namespace || '',
    resourceName: item.name,
    version: item.node?.version || item.managed?.version || '',
    group: item.group || '',
    kind: item.kind,
  };
}

interface ActionParam {
  name: string;
  value?: string;
  type?: string;
  default?: string;
}

interface ResourceAction {
  name: string;
  disabled?: boolean;
  displayName?: string;
  params?: ActionParam[];
}

/** The object's Lua resource actions (`resource.customizations.actions`, Argo's
 * `.../resource/actions`): each runs after a confirmation that also takes its parameters. */
function ActionsView({ app, ns, item }: { app: string; ns: string; item: TreeItem }) {
  const [actions, setActions] = useState<ResourceAction[] | null>(null);
  const [error, setError] = useState('');
  const [chosen, setChosen] = useState<ResourceAction | null>(null);
  const [values, setValues] = useState<Record<string, string>>({});
  const [result, setResult] = useState('');
  const [busy, setBusy] = useState(false);
  // A managed object Git declares and the cluster lacks (no node in the tree) has no actions.
  const [absent, setAbsent] = useState(false);

  useEffect(() => {
    setActions(null);
    setChosen(null);
    setResult('');
    setError('');
    setAbsent(!item.node);
    if (!item.node) return;
    get<{ actions: ResourceAction[] | null }>(appPath(app, ns, '/resource/actions', resourceQuery(item)))
      .then((r) => setActions(r.actions || []))
      .catch((e) => {
        setActions([]);
        // An object that is gone, or a server without the route, has no actions to offer.
        if (e instanceof ApiError && e.status === 400 && /not found as part of application/.test(e.message)) setAbsent(true);
        else if (!(e instanceof ApiError && e.status === 404)) setError((e as Error).message);
      });
  }, [item.id]);

  const run = async (e: Event) => {
    e.preventDefault();
    if (!chosen) return;
    setBusy(true);
    setError('');
    setResult('');
    try {
      await request('POST', appPath(app, ns, '/resource/actions/v2'), {
        ...resourceQuery(item),
        ...(ns ? { appNamespace: ns } : {}),
        action: chosen.name,
        resourceActionParameters: (chosen.params || []).map((p) => ({ name: p.name, value: values[p.name] ?? p.value ?? p.default ?? '' })),
      });
      setResult(`Action ${chosen.displayName || chosen.name} ran on ${item.kind} ${item.name}.`);
      setChosen(null);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (absent) {
    return (
      <section class="actions-view" aria-label="Resource actions" data-testid="resource-actions">
        <h3>Actions</h3>
        <p class="muted">None: the object is not in the cluster.</p>
      </section>
    );
  }
  if (actions === null) return null;
  if (!actions.length && !error) return null;
  return (
    <section class="actions-view" aria-label="Resource actions" data-testid="resource-actions">
      <h3>Actions</h3>
      <div class="action-buttons">
        {actions.map((a) => (
          <button
            type="button"
            class="btn"
            key={a.name}
            disabled={a.disabled || busy}
            title={a.disabled ? 'The action is not available for the object in its current state' : undefined}
            aria-pressed={chosen?.name === a.name}
            onClick={() => {
              setChosen(a);
              setValues({});
              setResult('');
            }}
          >
            {a.displayName || a.name}
          </button>
        ))}
      </div>
      {chosen && (
        <form class="form confirm card" onSubmit={run} aria-label={`Run ${chosen.name}`}>
          <p>
            Run <strong>{chosen.displayName || chosen.name}</strong> on {item.kind} {item.name}?
          </p>
          {(chosen.params || []).map((p) => (
            <label key={p.name}>
              {p.name}
              <input
                name={p.name}
                value={values[p.name] ?? p.value ?? p.default ?? ''}
                inputMode={p.type === 'number' ? 'numeric' : undefined}
                onInput={(e) => setValues({ ...values, [p.name]: e.currentTarget.value })}
              />
            </label>
          ))}
          <div class="form-actions">
            <button type="submit" class="btn primary" disabled={busy}>
              {busy ? 'Running…' : 'Run'}
            </button>
            <button type="button" class="btn" onClick={() => setChosen(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {result && (
        <p class="ok" role="status">
          {result}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
