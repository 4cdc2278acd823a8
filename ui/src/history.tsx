// History and rollback (status.history, POST .../rollback) and delete with cascade choices.
import { useState } from 'preact/hooks';
import { appPath, request, type Application, type Json } from './api';
import { Modal } from './modal';
import { FailedResults, failedResults, PhaseIcon, Time } from './status';
import { CommitInfo } from './commit';

/**
 * The deployment the live objects are at: the newest one, unless a later sync that changed the
 * cluster was not recorded (a partial sync, a failed one: Argo CD records neither in
 * `status.history`). A deployment's `deployStartedAt` is its operation's `startedAt`, so the
 * last operation tells which.
 */
export function currentDeployment(app: Application): number | undefined {
  const history: Json[] = app.status?.history || [];
  const newest = history[history.length - 1];
  if (!newest) return undefined;
  const op: Json = app.status?.operationState;
  const sync = op?.operation?.sync;
  if (!sync || sync.dryRun || op.phase === 'Running' || !op.startedAt || !newest.deployStartedAt) return newest.id;
  if (op.startedAt === newest.deployStartedAt) return newest.id;
  return Date.parse(op.startedAt) > Date.parse(newest.deployStartedAt) ? undefined : newest.id;
}

export function HistoryPanel({
  app,
  ns,
  canSync,
  reason,
  onClose,
  onDone,
}: {
  app: Application;
  ns: string;
  canSync: boolean;
  reason?: string;
  onClose: () => void;
  onDone: (msg: string) => void;
}) {
  const history: Json[] = [...(app.status?.history || [])].reverse();
  const current = currentDeployment(app);
  const newest = history[0]?.id;
  const op: Json = app.status?.operationState;
  const [confirm, setConfirm] = useState<Json | null>(null);
  const [prune, setPrune] = useState(false);
  const [dryRun, setDryRun] = useState(false);
  const [error, setError] = useState('');
  const auto = !!app.spec?.syncPolicy?.automated;

  const rollback = async () => {
    setError('');
    try {
      if (auto) {
        // As Argo CD's UI: the server refuses a rollback while auto-sync is on, so the confirm
        // turns it off first (the edit form's PUT, on a fresh copy) and then rolls back.
        const fresh: Application = await request('GET', appPath(app.metadata.name, ns));
        if (fresh.spec?.syncPolicy?.automated) {
          delete fresh.spec.syncPolicy.automated;
          await request('PUT', appPath(app.metadata.name, ns), fresh);
        }
      }
      await request('POST', appPath(app.metadata.name, ns, '/rollback'), { id: confirm.id, prune, dryRun });
      onDone(`Rollback to ${String(confirm.revision).slice(0, 7)} requested${dryRun ? ' (dry run)' : ''}.`);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <Modal title={`History of ${app.metadata.name}`} onClose={onClose} wide>
      {history.length === 0 && <p class="muted">No deployments yet.</p>}
      {history.length === 0 && op && (
        // A sync that never succeeded leaves no deployment: its result is the last operation's.
        <section class="card" aria-label="Last operation" data-testid="last-operation">
          <h3>Last operation</h3>
          <p>
            <PhaseIcon phase={op.phase} /> {op.phase}
            {op.operation?.sync?.dryRun ? ' (dry run)' : ''}: {op.message} <Time t={op.finishedAt || op.startedAt} />
            {op.syncResult?.revision && (
              <>
                {' '}
                at <code>{String(op.syncResult.revision).slice(0, 7)}</code>
              </>
            )}
          </p>
          <FailedResults results={failedResults(op)} />
        </section>
      )}
      {auto && <p class="notice">Automated sync is enabled: a rollback turns it off first (as in Argo CD).</p>}
      {history.length > 0 && current === undefined && (
        <p class="notice" data-testid="no-current">
          A later sync ({op?.phase}
          {op?.operation?.sync?.resources ? `, ${op.operation.sync.resources.length} selected objects` : ''}) is not recorded as a deployment and
          may have changed the cluster: no deployment below is marked current.
        </p>
      )}
      {history.length > 0 && (
        <table class="table" data-testid="history">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Revision</th>
              <th scope="col">Commit</th>
              <th scope="col">Deployed</th>
              <th scope="col">Source</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {history.map((h) => {
              const src = h.source ?? h.sources?.[0] ?? {};
              return (
                <tr key={h.id}>
                  <td>{h.id}</td>
                  <td>
                    <code title={h.revision}>{String(h.revision || '').slice(0, 7)}</code>
                    {h.id === current && <span class="tag">current</span>}
                  </td>
                  <td class="commit-cell">
                    {!src.chart && <CommitInfo app={app.metadata.name} ns={ns} revision={h.revision || h.revisions?.[0]} compact />}
                  </td>
                  <td>
                    <Time t={h.deployedAt} />
                  </td>
                  <td class="ellipsis" title={`${src.repoURL || ''} ${src.path || src.chart || ''} ${src.targetRevision || ''}`}>
                    {src.repoURL} {src.path} {src.targetRevision}
                  </td>
                  <td>
                    {h.id !== current && (
                      <span title={reason}>
                        <button type="button" class="btn" disabled={!canSync} onClick={() => setConfirm(h)}>
                          {h.id === newest ? 'Redeploy' : 'Rollback'}
                        </button>
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {confirm && (
        <div class="card confirm" role="group" aria-label="Confirm rollback">
          <p>
            Roll {app.metadata.name} back to deployment {confirm.id} (<code>{String(confirm.revision).slice(0, 7)}</code>)?
          </p>
          {auto && (
            <p class="notice" data-testid="rollback-auto-sync">
              Auto-sync is enabled: it must be disabled for a rollback to happen (it would sync back to Git at once). Confirming disables auto-sync
              (removes <code>spec.syncPolicy.automated</code>) and then rolls back.
            </p>
          )}
          <label class="check">
            <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.currentTarget.checked)} /> Prune
          </label>
          <label class="check">
            <input type="checkbox" checked={dryRun} onChange={(e) => setDryRun(e.currentTarget.checked)} /> Dry run
          </label>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <div class="form-actions">
            <button type="button" class="btn primary" onClick={rollback}>
              {auto ? 'Disable auto-sync and roll back' : 'Rollback'}
            </button>
            <button type="button" class="btn" onClick={() => setConfirm(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </Modal>
  );
}

export function DeleteDialog({ app, ns, onClose, onDone }: { app: Application; ns: string; onClose: () => void; onDone: () => void }) {
  const [typed, setTyped] = useState('');
  const [policy, setPolicy] = useState<'foreground' | 'background' | 'orphan'>('foreground');
  const [error, setError] = useState('');
  const name = app.metadata.name;
  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    const q: Record<string, string> = policy === 'orphan' ? { cascade: 'false' } : { cascade: 'true', propagationPolicy: policy };
    try {
      await request('DELETE', appPath(name, ns, '', q));
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <Modal title={`Delete ${name}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <fieldset>
          <legend>Propagation</legend>
          <label class="check">
            <input type="radio" name="policy" checked={policy === 'foreground'} onChange={() => setPolicy('foreground')} /> Foreground: delete the
            application's resources, then the application
          </label>
          <label class="check">
            <input type="radio" name="policy" checked={policy === 'background'} onChange={() => setPolicy('background')} /> Background: delete the
            application now and its resources after
          </label>
          <label class="check">
            <input type="radio" name="policy" checked={policy === 'orphan'} onChange={() => setPolicy('orphan')} /> Non-cascading: keep the
            resources in the cluster
          </label>
        </fieldset>
        <label>
          Type the application's name ({name}) to confirm
          <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="form-actions">
          <button type="submit" class="btn danger" disabled={typed !== name}>
            Delete
          </button>
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
