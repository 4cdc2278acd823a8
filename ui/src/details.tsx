// Application details: the header (sync, health, operation, conditions), the resource tree (or a
// list, or objects grouped by kind), the object side panel, and the actions (sync, refresh,
// history and rollback, terminate, delete), each disabled with the reason when RBAC denies it.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, appPath, canI, get, rbacObject, settings, request, watchApplications, watchResourceTree, type Application, type Json, type ResourceDiff, type ResourceNode, type UserInfo } from './api';
import { FailedResults, failedResults, HealthIcon, HealthLabel, PhaseIcon, SyncIcon, SyncLabel, Time } from './status';
import { layout, nameParts, resKey, revisionOf, shortKind, treeItems, type Managed, type TreeItem } from './tree';
import { AppSummaryPanel, usePanelFocus } from './app-summary';
import { ResourcePanel } from './resource';
import { OperationPanel } from './operation';
import type { ResourceResult } from './status';
import { navigate } from './router';
import { project, source } from './apps';
import { SyncPanel } from './sync';
import { DeleteDialog, HistoryPanel } from './history';
import { CommitInfo } from './commit';
import { LazyAppForm } from './appform-lazy';
import { Modal } from './modal';

interface Perms {
  sync: boolean;
  update: boolean;
  delete: boolean;
  get: boolean;
  loaded: boolean;
}

export function denied(user: UserInfo | null, action: string, object: string): string {
  const who = user?.username ? `Your account (${user.username})` : 'You';
  return `${who} may not ${action} this application: RBAC denies applications, ${action}, ${object}`;
}

export function AppDetailsPage({
  route,
  user,
}: {
  route: { namespace: string; name: string; resource?: string; tab?: string };
  user: UserInfo | null;
}) {
  const { name } = route;
  // Argo's appNamespace query: the control namespace is accepted as well as any other.
  const ns = route.namespace;
  const [app, setApp] = useState<Application | null>(null);
  const [error, setError] = useState('');
  const [tree, setTree] = useState<ResourceNode[]>([]);
  const [treeError, setTreeError] = useState('');
  const [diffs, setDiffs] = useState<ResourceDiff[] | null>(null);
  const [view, setView] = useState<'tree' | 'list' | 'kinds'>('tree');
  const [dialog, setDialog] = useState<'' | 'sync' | 'history' | 'delete' | 'edit' | 'terminate' | 'operation'>('');
  const [perms, setPerms] = useState<Perms>({ sync: false, update: false, delete: false, get: false, loaded: false });
  const [notice, setNotice] = useState('');
  /** Why the diffs could not be read; not shown again when a condition already says it. */
  const [compareError, setCompareError] = useState('');
  const [refreshing, setRefreshing] = useState('');
  const lastRv = useRef('');
  const [controlNs, setControlNs] = useState('');
  useEffect(() => {
    settings().then((s) => setControlNs(s?.controllerNamespace || ''));
  }, []);

  const load = useCallback(async () => {
    try {
      setApp(await get<Application>(appPath(name, ns)));
    } catch (e) {
      // The server answers 403 for an Application that does not exist as for one the caller may
      // not see (as Argo CD, so that names do not leak): say both.
      const hidden = e instanceof ApiError && (e.status === 403 || e.status === 404);
      setError(hidden ? `Application ${name} not found${ns ? ` in namespace ${ns}` : ''}, or you may not see it (the server says: ${(e as Error).message}).` : (e as Error).message);
    }
  }, [name, ns]);

  const loadTree = useCallback(async () => {
    try {
      const t = await get<{ nodes: ResourceNode[] | null }>(appPath(name, ns, '/resource-tree'));
      setTree(t.nodes || []);
      setTreeError('');
    } catch (e) {
      setTreeError((e as Error).message);
    }
  }, [name, ns]);

  const loadDiffs = useCallback(async () => {
    try {
      const r = await get<{ items: ResourceDiff[] | null }>(appPath(name, ns, '/managed-resources'));
      setDiffs(r.items || []);
      setCompareError('');
    } catch (e) {
      setDiffs([]);
      setCompareError((e as Error).message);
    }
  }, [name, ns]);

  useEffect(() => {
    setApp(null);
    setError('');
    setDiffs(null);
    load();
    const stop = watchApplications({ name, ...(ns ? { appNamespace: ns } : {}) }, (type, a) => {
      if (a.metadata.name !== name) return;
      if (type === 'DELETED') {
        setError(`Application ${name} was deleted.`);
        setApp(null);
      } else setApp(a);
    });
    // The tree follows the server's tree stream (Argo's WatchResourceTree): the whole tree
    // first, then again whenever it changes (Pods that come and go included). Should the server
    // refuse or end the stream for good, look again now and then instead.
    let timer: number | undefined;
    const stopTree = watchResourceTree(
      name,
      ns,
      (nodes) => {
        setTree(nodes);
        setTreeError('');
      },
      () => {
        if (timer === undefined) timer = window.setInterval(loadTree, 10_000);
      },
    );
    return () => {
      stop();
      stopTree();
      if (timer !== undefined) clearInterval(timer);
    };
  }, [name, ns]);

  // Every change of the Application (a sync, a health change) can change the tree and the diffs.
  useEffect(() => {
    const rv = app?.metadata.resourceVersion || '';
    if (!app || rv === lastRv.current) return;
    const first = lastRv.current === '';
    lastRv.current = rv;
    if (first || diffs !== null) loadDiffs();
  }, [app?.metadata.resourceVersion]);

  useEffect(() => {
    if (!app) return;
    const obj = rbacObject(project(app), ns, name, controlNs);
    Promise.all([canI('applications', 'sync', obj), canI('applications', 'update', obj), canI('applications', 'delete', obj), canI('applications', 'get', obj)]).then(
      ([sync, update, del, g]) => setPerms({ sync, update, delete: del, get: g, loaded: true }),
    );
  }, [app && project(app), user?.username, controlNs]);

  const managed: Managed[] = app?.status?.resources || [];
  const items = useMemo(() => treeItems(name, tree, managed), [name, tree, managed]);
  const selected = route.resource ? items.find((i) => i.id === route.resource || resId(i) === route.resource) : undefined;
  usePanelFocus(selected?.id);

  const select = (item: TreeItem | null, tab?: string) => {
    const q = new URLSearchParams(location.search);
    if (item) q.set('resource', resId(item));
    else q.delete('resource');
    if (tab) q.set('tab', tab);
    else q.delete('tab');
    const qs = q.toString();
    navigate(`${location.pathname}${qs ? `?${qs}` : ''}`);
  };

  /** Opens the panel of an object of a sync result, when the tree has it. */
  const selectResult = (r: ResourceResult) => {
    const i = items.find((x) => !x.root && x.kind === r.kind && x.name === r.name && (x.namespace || '') === (r.namespace || '') && (x.group || '') === (r.group || ''));
    if (i) select(i);
  };

  const refresh = async (kind: 'normal' | 'hard') => {
    setRefreshing(kind);
    try {
      setApp(await get<Application>(appPath(name, ns, '', { refresh: kind })));
      await loadTree();
      await loadDiffs();
      setNotice(kind === 'hard' ? 'Hard refresh done: manifests rendered again.' : 'Refreshed.');
    } catch (e) {
      setNotice(`Refresh failed: ${(e as Error).message}`);
    } finally {
      setRefreshing('');
    }
  };

  const terminate = async () => {
    setDialog('');
    try {
      await request('DELETE', appPath(name, ns, '/operation'));
      setNotice('Terminating the operation.');
    } catch (e) {
      setNotice(`Terminate failed: ${(e as Error).message}`);
    }
  };

  if (error && !app) {
    return (
      <div class="page">
        <nav class="crumbs" aria-label="Breadcrumb">
          <a href="/applications">Applications</a> / {name}
        </nav>
        <p class="error" role="alert">
          {error}
        </p>
      </div>
    );
  }
  if (!app) return <div class="page muted">Loading {name}…</div>;

  const st = app.status || {};
  const op = st.operationState;
  const running = op && (op.phase === 'Running' || op.phase === 'Terminating');
  const obj = rbacObject(project(app), ns, name, controlNs);
  const why = (action: string, allowed: boolean) => (perms.loaded && !allowed ? denied(user, action, obj) : undefined);
  const s = source(app);

  return (
    <div class={`page details ${selected ? 'with-panel' : ''}`}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/applications">Applications</a> / <span aria-current="page">{name}</span>
      </nav>
      <header class="details-head">
        <h1>
          <HealthIcon status={st.health?.status} /> {name}
        </h1>
        <div class="actions" role="toolbar" aria-label="Application actions">
          <ActionButton label="Sync" reason={why('sync', perms.sync)} disabled={!perms.sync} onClick={() => setDialog('sync')} primary />
          <ActionButton label={refreshing === 'normal' ? 'Refreshing…' : 'Refresh'} reason={why('get', perms.get)} disabled={!perms.get || !!refreshing} onClick={() => refresh('normal')} />
          <ActionButton label={refreshing === 'hard' ? 'Refreshing…' : 'Hard refresh'} reason={why('get', perms.get)} disabled={!perms.get || !!refreshing} onClick={() => refresh('hard')} />
          <ActionButton label="History and rollback" onClick={() => setDialog('history')} />
          <ActionButton label="Edit" reason={why('update', perms.update)} disabled={!perms.update} onClick={() => setDialog('edit')} />
          {running && <ActionButton label="Terminate" reason={why('sync', perms.sync)} disabled={!perms.sync} onClick={() => setDialog('terminate')} />}
          <ActionButton label="Delete" reason={why('delete', perms.delete)} disabled={!perms.delete} onClick={() => setDialog('delete')} danger />
        </div>
      </header>
      {notice && (
        <p class="notice" role="status">
          {notice}{' '}
          <button type="button" class="btn link" onClick={() => setNotice('')} aria-label="Dismiss">
            ✕
          </button>
        </p>
      )}
      {compareError && !said(compareError, st.conditions) && (
        <p class="notice" role="status">
          Could not compare: {compareError}
        </p>
      )}
      <section class="status-panels" aria-label="Status">
        <div class="card stat" data-testid="app-health">
          <div class="stat-title">App health</div>
          <div class="stat-value">
            <HealthLabel status={st.health?.status} />
          </div>
          {st.health?.message && !said(st.health.message, st.conditions) && <div class="muted">{st.health.message}</div>}
        </div>
        <div class="card stat" data-testid="app-sync">
          <div class="stat-title">Sync status</div>
          <div class="stat-value">
            <SyncLabel status={st.sync?.status} />
          </div>
          <div class="muted">
            to {s.targetRevision}
            {st.sync?.revision && (
              <>
                {' '}
                (<code title={st.sync.revision}>{String(st.sync.revision).slice(0, 7)}</code>)
              </>
            )}
          </div>
          {st.sync?.revision && !s.chart && <CommitInfo app={name} ns={ns} revision={String(st.sync.revision)} />}
          <div class="muted ellipsis" title={s.repoURL}>
            {s.repoURL} {s.chart || s.path}
          </div>
        </div>
        <div class="card stat" data-testid="app-operation">
          <div class="stat-title">{running ? 'Operation in progress' : 'Last sync'}</div>
          {op ? (
            <>
              <div class="stat-value" data-phase={op.phase} data-dry-run={op.operation?.sync?.dryRun ? 'true' : 'false'}>
                <PhaseIcon phase={op.phase} /> {op.phase}
                {op.operation?.sync?.dryRun ? ' (dry run)' : ''}
              </div>
              <div class="muted">{op.message}</div>
              <FailedResults results={failedResults(op)} onSelect={selectResult} />
              {op.syncResult?.resources?.length > 0 && (
                <button type="button" class="btn link" onClick={() => setDialog('operation')}>
                  All results ({op.syncResult.resources.length})
                </button>
              )}
              <div class="muted">
                <Time t={op.finishedAt || op.startedAt} />
                {op.syncResult?.revision && (
                  <>
                    {' '}
                    at <code>{String(op.syncResult.revision).slice(0, 7)}</code>
                  </>
                )}
                {op.operation?.initiatedBy?.username && <> by {op.operation.initiatedBy.username}</>}
                {op.operation?.initiatedBy?.automated && <> (automated)</>}
              </div>
            </>
          ) : (
            <div class="muted">Never synced</div>
          )}
        </div>
      </section>
      {st.conditions?.length > 0 && (
        <section class="conditions card" aria-label="Conditions">
          <h2>Conditions</h2>
          <ul>
            {st.conditions.map((c: Json, i: number) => (
              <li key={i} class={/Error|Warning/.test(c.type) ? 'cond-warn' : ''}>
                <strong>{c.type}</strong>: {c.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      <div class="view-bar">
        <div class="seg" role="group" aria-label="Resource view">
          <button type="button" class="btn" aria-pressed={view === 'tree'} onClick={() => setView('tree')}>
            Tree
          </button>
          <button type="button" class="btn" aria-pressed={view === 'list'} onClick={() => setView('list')}>
            List
          </button>
          <button type="button" class="btn" aria-pressed={view === 'kinds'} onClick={() => setView('kinds')}>
            By kind
          </button>
        </div>
        <span class="muted">{items.length - 1} objects</span>
      </div>
      {treeError && (
        <p class="error" role="alert">
          {treeError}
        </p>
      )}
      {view === 'tree' && <TreeView items={items} selected={selected?.id} onSelect={(i) => select(i)} />}
      {view === 'list' && <ListView items={items.filter((i) => !i.root)} onSelect={(i) => select(i)} />}
      {view === 'kinds' && <KindsView items={items.filter((i) => !i.root)} onSelect={(i) => select(i)} />}
      {selected && (
        selected.root ? (
          <AppSummaryPanel app={app} onClose={() => select(null)} />
        ) : (
          <ResourcePanel app={name} ns={ns} item={selected} diffs={diffs} initialTab={route.tab} onClose={() => select(null)} />
        )
      )}
      {dialog === 'sync' && (
        <SyncPanel
          app={app}
          ns={ns}
          onClose={() => setDialog('')}
          onDone={(msg) => {
            setDialog('');
            setNotice(msg);
          }}
        />
      )}
      {dialog === 'history' && (
        <HistoryPanel
          app={app}
          ns={ns}
          canSync={perms.sync}
          reason={why('sync', perms.sync)}
          onClose={() => setDialog('')}
          onDone={(msg) => {
            setDialog('');
            setNotice(msg);
          }}
        />
      )}
      {dialog === 'edit' && (
        <LazyAppForm
          app={app}
          onClose={() => setDialog('')}
          onSaved={(a) => {
            setDialog('');
            setApp(a);
            setNotice(`Saved ${a.metadata.name}.`);
          }}
        />
      )}
      {dialog === 'operation' && (
        <OperationPanel
          app={app}
          onClose={() => setDialog('')}
          onSelect={(r) => {
            setDialog('');
            selectResult(r);
          }}
        />
      )}
      {dialog === 'terminate' && running && (
        <Modal title="Terminate the operation" onClose={() => setDialog('')}>
          <div class="form" data-testid="terminate-dialog">
            <p>
              Stop the running {op?.operation?.sync ? 'sync' : 'operation'} of {name}? Objects it has already applied stay as they are; the
              operation ends as Failed.
            </p>
            <div class="form-actions">
              <button type="button" class="btn danger" onClick={terminate}>
                Terminate
              </button>
              <button type="button" class="btn" onClick={() => setDialog('')}>
                Cancel
              </button>
            </div>
          </div>
        </Modal>
      )}
      {dialog === 'delete' && (
        <DeleteDialog
          app={app}
          ns={ns}
          onClose={() => setDialog('')}
          onDone={() => {
            setDialog('');
            navigate('/applications');
          }}
        />
      )}
    </div>
  );
}

/** Whether a condition already says `message` (the comparison's error is the controller's
 * ComparisonError condition too: shown once, as the condition). */
function said(message: string, conditions: Json[] | undefined): boolean {
  // The route's error and the condition name the same failure with their own prefixes
  // ("comparing Application x: ...", "Failed to compare desired state to live state: ..."):
  // compare what follows the first prefix.
  const core = message.includes(': ') ? message.slice(message.indexOf(': ') + 2) : message;
  return (conditions || []).some(
    (c) => typeof c?.message === 'string' && c.message && (message.includes(c.message) || c.message.includes(message) || (core.length >= 20 && c.message.includes(core))),
  );
}

const resId = (i: TreeItem) => (i.root ? 'app' : resKey(i.group, i.kind, i.namespace, i.name));

function ActionButton({
  label,
  onClick,
  disabled,
  reason,
  primary,
  danger,
}: {
  label: string;
  onClick: () => void;
  disabled?: boolean;
  reason?: string;
  primary?: boolean;
  danger?: boolean;
}) {
  return (
    <span class="action" title={reason}>
      <button
        type="button"
        class={`btn ${primary ? 'primary' : ''} ${danger ? 'danger' : ''}`}
        disabled={disabled}
        aria-describedby={reason ? `why-${label}` : undefined}
        onClick={onClick}
      >
        {label}
      </button>
      {reason && (
        <span id={`why-${label}`} class="sr-only" data-testid={`denied-${label}`}>
          {reason}
        </span>
      )}
    </span>
  );
}

function NodeBox({ item, selected, onSelect }: { item: TreeItem; selected: boolean; onSelect: (i: TreeItem) => void }) {
  return (
    <button
      type="button"
      class={`node ${item.root ? 'root' : ''} ${selected ? 'selected' : ''} h-${item.health || 'none'}`}
      data-testid="tree-node"
      data-kind={item.kind}
      data-name={item.name}
      aria-label={`${item.kind} ${item.name}${item.health ? `, health ${item.health}` : ''}${item.sync ? `, ${item.sync}` : ''}`}
      onClick={() => onSelect(item)}
    >
      <span class="kind-badge" aria-hidden="true">
        {shortKind(item.kind)}
      </span>
      <span class="node-text">
        <NodeName name={item.name} />
        <span class="node-kind muted">
          {item.kind}
          {revisionOf(item.node?.info) ? ` · ${revisionOf(item.node?.info)}` : ''}
          {item.managed?.hook ? ' · hook' : ''}
          {item.managed?.syncWave ? ` · wave ${item.managed.syncWave}` : ''}
        </span>
      </span>
      <span class="node-status">
        {item.health && <HealthIcon status={item.health} />}
        {item.sync && <SyncIcon status={item.sync} />}
      </span>
    </button>
  );
}

function NodeName({ name }: { name: string }) {
  const [head, tail] = nameParts(name);
  return (
    <span class="node-name" title={name}>
      {head && <span class="name-head">{head}</span>}
      <span class="name-tail">{tail}</span>
    </span>
  );
}

function TreeView({ items, selected, onSelect }: { items: TreeItem[]; selected?: string; onSelect: (i: TreeItem) => void }) {
  const l = useMemo(() => layout(items), [items]);
  return (
    <div class="tree-scroll" data-testid="resource-tree" aria-label="Resource tree">
      <div class="tree" style={{ width: `${l.width}px`, height: `${l.height}px` }}>
        <svg class="edges" width={l.width} height={l.height} aria-hidden="true">
          {l.edges.map((e) => (
            <polyline key={`${e.from}>${e.to}`} data-from={e.from} data-to={e.to} points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} />
          ))}
        </svg>
        {l.items.map((i) => (
          <div key={i.id} class="node-pos" data-id={i.id} style={{ left: `${i.x}px`, top: `${i.y}px`, width: `${i.w}px`, height: `${i.h}px` }}>
            <NodeBox item={i} selected={selected === i.id} onSelect={onSelect} />
          </div>
        ))}
      </div>
    </div>
  );
}

function ListView({ items, onSelect }: { items: TreeItem[]; onSelect: (i: TreeItem) => void }) {
  const sorted = [...items].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  return (
    <table class="table">
      <thead>
        <tr>
          <th scope="col">Kind</th>
          <th scope="col">Name</th>
          <th scope="col">Namespace</th>
          <th scope="col">Sync</th>
          <th scope="col">Health</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((i) => (
          <tr key={i.id}>
            <td>{i.kind}</td>
            <td>
              <button type="button" class="btn link" onClick={() => onSelect(i)}>
                {i.name}
              </button>
            </td>
            <td>{i.namespace}</td>
            <td>{i.sync ? <SyncLabel status={i.sync} /> : <span class="muted">owned</span>}</td>
            <td>{i.health ? <HealthLabel status={i.health} /> : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function KindsView({ items, onSelect }: { items: TreeItem[]; onSelect: (i: TreeItem) => void }) {
  const groups = new Map<string, TreeItem[]>();
  for (const i of items) groups.set(i.kind, [...(groups.get(i.kind) || []), i]);
  return (
    <div class="kinds">
      {[...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([kind, list]) => (
          <section key={kind} class="card kind-group" aria-label={kind}>
            <h2>
              {kind} <span class="count">{list.length}</span>
            </h2>
            <div class="kind-nodes">
              {list
                .sort((a, b) => a.name.localeCompare(b.name))
                .map((i) => (
                  <NodeBox key={i.id} item={i} selected={false} onSelect={onSelect} />
                ))}
            </div>
          </section>
        ))}
    </div>
  );
}
