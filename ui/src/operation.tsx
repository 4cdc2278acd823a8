// The operation state panel (Argo's application-operation-state): the last or running operation
// (phase, message, start, duration, revision, who started it) and its result object by object
// (sync wave, kind, namespace, name, status or hook phase, health, hook, message), filterable
// by status; a row opens the object's panel when the tree has it.
import { useState } from 'preact/hooks';
import type { Application, Json } from './api';
import { Modal } from './modal';
import { PhaseIcon, Time, type ResourceResult } from './status';

/** Argo's `getStatus`: a hook's phase, else the apply result. */
const statusOf = (r: ResourceResult & { hookType?: string }) => (r.hookType ? r.hookPhase || '' : r.status || '');

function duration(from?: string, to?: string): string {
  const start = Date.parse(from || '');
  if (!start) return '';
  const s = Math.max(0, Math.round(((to ? Date.parse(to) : Date.now()) - start) / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

export function OperationPanel({ app, onClose, onSelect }: { app: Application; onClose: () => void; onSelect: (r: ResourceResult) => void }) {
  const op: Json = app.status?.operationState;
  const [filter, setFilter] = useState('');
  if (!op) return null;
  const results: (ResourceResult & { hookType?: string; syncPhase?: string })[] = op.syncResult?.resources || [];
  const resources: Json[] = app.status?.resources || [];
  const health = (r: ResourceResult) =>
    resources.find((x) => x.kind === r.kind && x.name === r.name && (x.namespace || '') === (r.namespace || '') && (x.group || '') === (r.group || ''));
  const statuses = [...new Set(results.map(statusOf).filter(Boolean))].sort();
  const shown = filter ? results.filter((r) => statusOf(r) === filter) : results;
  const by = op.operation?.initiatedBy;
  return (
    <Modal title="Operation" onClose={onClose} wide>
      <dl class="fields" data-testid="operation-state">
        <dt>Operation</dt>
        <dd>{op.operation?.sync ? (op.operation.sync.dryRun ? 'Sync (dry run)' : 'Sync') : 'Operation'}</dd>
        <dt>Phase</dt>
        <dd>
          <PhaseIcon phase={op.phase} /> {op.phase}
        </dd>
        {op.message && (
          <>
            <dt>Message</dt>
            <dd class="pre-wrap">{op.message}</dd>
          </>
        )}
        <dt>Started</dt>
        <dd>
          <Time t={op.startedAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{duration(op.startedAt, op.finishedAt) || '—'}</dd>
        {op.syncResult?.revision && (
          <>
            <dt>Revision</dt>
            <dd>
              <code>{op.syncResult.revision}</code>
            </dd>
          </>
        )}
        <dt>Initiated by</dt>
        <dd>{by?.automated ? 'automated sync policy' : by?.username || 'Unknown'}</dd>
      </dl>
      {results.length > 0 && (
        <>
          <div class="view-bar">
            <h3>Result</h3>
            <label>
              Status{' '}
              <select value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
                <option value="">all</option>
                {statuses.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <table class="table" data-testid="operation-results">
            <thead>
              <tr>
                <th scope="col">Wave</th>
                <th scope="col">Kind</th>
                <th scope="col">Namespace</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Health</th>
                <th scope="col">Hook</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r, i) => {
                const st = statusOf(r);
                const failed = st === 'SyncFailed' || st === 'Failed' || st === 'Error';
                const res = health(r);
                return (
                  <tr key={i} data-status={st}>
                    <td>{res?.syncWave ?? 0}</td>
                    <td>{r.kind}</td>
                    <td>{r.namespace}</td>
                    <td>
                      <button type="button" class="btn link" onClick={() => onSelect(r)}>
                        {r.name}
                      </button>
                    </td>
                    <td class={failed ? 'error' : ''}>{st}</td>
                    <td>{res?.health?.status || '—'}</td>
                    <td>{r.hookType || ''}</td>
                    <td class={failed ? 'error pre-wrap' : 'pre-wrap'}>{r.message}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </Modal>
  );
}
