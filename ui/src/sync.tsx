// The sync panel: Argo's ApplicationSyncRequest from a form (revision, prune and its propagation,
// dry run, apply out-of-sync only, apply only (no hooks), force, sync options starting from the
// Application's own, retry, and the resources to sync). Objects Git no longer declares are
// marked; with Prune, the objects it will delete are listed and the user types "prune" first, as
// in Argo's panel.
import { useState } from 'preact/hooks';
import { appPath, request, type Application } from './api';
import { Modal } from './modal';
import { source } from './apps';
import { SyncIcon } from './status';
import type { Managed } from './tree';

const OPTIONS = ['ServerSideApply=true', 'Replace=true', 'CreateNamespace=true', 'PruneLast=true', 'RespectIgnoreDifferences=true', 'Validate=false'];

const rkey = (r: Managed) => `${r.group || ''}/${r.kind}/${r.namespace || ''}/${r.name}`;

const PROPAGATION = ['foreground', 'background', 'orphan'];

/** The Application's own sync options (`spec.syncPolicy.syncOptions`), as Argo's panel starts from them. */
function specOptions(app: Application): string[] {
  const items = app.spec?.syncPolicy?.syncOptions;
  return Array.isArray(items) ? items.filter((o: unknown): o is string => typeof o === 'string') : [];
}

export function SyncPanel({ app, ns, onClose, onDone }: { app: Application; ns: string; onClose: () => void; onDone: (msg: string) => void }) {
  const resources: Managed[] = app.status?.resources || [];
  const [revision, setRevision] = useState(source(app).targetRevision);
  const [prune, setPrune] = useState(false);
  const [dryRun, setDryRun] = useState(false);
  const own = specOptions(app);
  const [outOfSyncOnly, setOutOfSyncOnly] = useState(own.includes('ApplyOutOfSyncOnly=true'));
  const [force, setForce] = useState(false);
  // Argo's "Apply only": skip hooks. Unticked, the sync runs hooks (PreSync, Sync, PostSync...).
  const [applyOnly, setApplyOnly] = useState(false);
  const [options, setOptions] = useState<string[]>(() => own.filter((o) => OPTIONS.includes(o)));
  // The request's options replace the Application's (Argo's server), so those the panel has no
  // control for (FailOnSharedResource=true, SkipDryRunOnMissingResource=true...) are kept, as
  // Argo's panel keeps them.
  const kept = own.filter((o) => !OPTIONS.includes(o) && !o.startsWith('ApplyOutOfSyncOnly=') && !o.startsWith('PrunePropagationPolicy='));
  const ownPropagation = own.some((o) => o.startsWith('PrunePropagationPolicy='));
  const [propagation, setPropagation] = useState(() => {
    const set = own.find((o) => o.startsWith('PrunePropagationPolicy='));
    return set ? set.slice('PrunePropagationPolicy='.length) : 'foreground';
  });
  const [retry, setRetry] = useState(false);
  const [retryLimit, setRetryLimit] = useState(2);
  const [selected, setSelected] = useState<Set<string>>(() => new Set(resources.map(rkey)));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // The objects a confirmed prune deletes (null: not asked yet).
  const [pruneAsk, setPruneAsk] = useState<Managed[] | null>(null);
  const [pruneTyped, setPruneTyped] = useState('');

  const toggle = (k: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(k);
    else next.delete(k);
    setSelected(next);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const deleted = resources.filter((r) => r.requiresPruning && selected.has(rkey(r)));
    // Asked again when the selection now deletes an object the confirm did not list.
    const asked = new Set((pruneAsk || []).map(rkey));
    if (prune && !dryRun && deleted.length > 0 && (pruneAsk === null || deleted.some((r) => !asked.has(rkey(r))))) {
      setPruneTyped('');
      setPruneAsk(deleted);
      return;
    }
    if (prune && !dryRun && pruneAsk !== null && pruneTyped !== 'prune') return;
    setBusy(true);
    setError('');
    const items = [...options, ...kept];
    if (outOfSyncOnly) items.push('ApplyOutOfSyncOnly=true');
    if (propagation !== 'foreground' || ownPropagation) items.push(`PrunePropagationPolicy=${propagation}`);
    const all = selected.size === resources.length;
    const body: Record<string, unknown> = {
      revision,
      prune,
      dryRun,
      strategy: applyOnly ? { apply: { force } } : { hook: { force } },
    };
    if (!all)
      body.resources = resources
        .filter((r) => selected.has(rkey(r)))
        .map((r) => ({ group: r.group || '', kind: r.kind, name: r.name, namespace: r.namespace || '' }));
    if (items.length) body.syncOptions = { items };
    if (retry) body.retryStrategy = { limit: retryLimit, backoff: { duration: '5s', factor: 2, maxDuration: '3m' } };
    try {
      await request('POST', appPath(app.metadata.name, ns, '/sync'), body);
      onDone(dryRun ? 'Dry-run sync requested: nothing is changed in the cluster.' : 'Sync requested.');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
      setPruneAsk(null);
    }
  };

  return (
    <Modal title={`Synchronize ${app.metadata.name}`} onClose={onClose} wide>
      <form class="form" onSubmit={submit} data-testid="sync-panel">
        <label>
          Revision
          <input value={revision} onInput={(e) => setRevision(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Sync options</legend>
          <label class="check">
            <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.currentTarget.checked)} /> Prune
          </label>
          <label class="check">
            <input type="checkbox" name="dryRun" checked={dryRun} onChange={(e) => setDryRun(e.currentTarget.checked)} /> Dry run
          </label>
          <label class="check">
            <input type="checkbox" checked={outOfSyncOnly} onChange={(e) => setOutOfSyncOnly(e.currentTarget.checked)} /> Apply out of sync only
          </label>
          <label class="check">
            <input type="checkbox" checked={applyOnly} onChange={(e) => setApplyOnly(e.currentTarget.checked)} /> Apply only (skip hooks)
          </label>
          <label class="check">
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} /> Force
          </label>
          {OPTIONS.map((o) => (
            <label class="check" key={o}>
              <input
                type="checkbox"
                checked={options.includes(o)}
                onChange={(e) => setOptions(e.currentTarget.checked ? [...options, o] : options.filter((x) => x !== o))}
              />{' '}
              {o}
            </label>
          ))}
          {kept.length > 0 && (
            <p class="muted" data-testid="kept-options">
              Also from the Application: {kept.join(', ')}
            </p>
          )}
          {(prune || propagation !== 'foreground') && (
            <label>
              Prune propagation policy
              <select value={propagation} onChange={(e) => setPropagation(e.currentTarget.value)}>
                {PROPAGATION.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label class="check">
            <input type="checkbox" checked={retry} onChange={(e) => setRetry(e.currentTarget.checked)} /> Retry
          </label>
          {retry && (
            <label>
              Retry limit
              <input type="number" min={1} max={20} value={retryLimit} onInput={(e) => setRetryLimit(Number(e.currentTarget.value) || 1)} />
            </label>
          )}
        </fieldset>
        <fieldset>
          <legend>
            Resources ({selected.size} of {resources.length}){' '}
            <button type="button" class="btn link" onClick={() => setSelected(new Set(resources.map(rkey)))}>
              all
            </button>{' '}
            <button type="button" class="btn link" onClick={() => setSelected(new Set(resources.filter((r) => r.status === 'OutOfSync').map(rkey)))}>
              out of sync
            </button>{' '}
            <button type="button" class="btn link" onClick={() => setSelected(new Set())}>
              none
            </button>
          </legend>
          <div class="res-list">
            {resources.map((r) => (
              <label class="check" key={rkey(r)}>
                <input type="checkbox" data-resource={`${r.kind}/${r.name}`} checked={selected.has(rkey(r))} onChange={(e) => toggle(rkey(r), e.currentTarget.checked)} />
                <SyncIcon status={r.status} /> {r.kind}/{r.name}
                {r.namespace ? <span class="muted"> ({r.namespace})</span> : null}
                {r.requiresPruning && (
                  <span class={prune ? 'tag danger' : 'tag'} data-testid="prune-mark">
                    {prune ? 'will be deleted' : 'requires pruning (tick Prune to delete)'}
                  </span>
                )}
              </label>
            ))}
          </div>
        </fieldset>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {pruneAsk && prune && !dryRun && (
          <div class="card confirm" role="group" aria-label="Confirm prune" data-testid="prune-confirm">
            <p>
              <strong>
                {pruneAsk.length === resources.length ? 'Prune all resources?' : 'Prune resources?'} Resources to be deleted ({pruneAsk.length}):
              </strong>
            </p>
            <ul>
              {pruneAsk.map((r) => (
                <li key={rkey(r)}>
                  {r.kind}/{r.name}
                  {r.namespace ? ` (${r.namespace})` : ''}
                </li>
              ))}
            </ul>
            <label>
              Type 'prune' to confirm
              <input value={pruneTyped} onInput={(e) => setPruneTyped(e.currentTarget.value)} autoComplete="off" />
            </label>
            <div class="form-actions">
              <button type="submit" class="btn danger" disabled={busy || pruneTyped !== 'prune'}>
                Prune and synchronize
              </button>
              <button type="button" class="btn" onClick={() => setPruneAsk(null)}>
                Cancel
              </button>
            </div>
          </div>
        )}
        <div class="form-actions">
          <button type="submit" class="btn primary" disabled={busy || selected.size === 0 || (pruneAsk !== null && prune && !dryRun)}>
            {busy ? 'Requesting…' : 'Synchronize'}
          </button>
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
