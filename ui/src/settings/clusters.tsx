// Clusters (Argo's /settings/clusters): each with its connection state, its details, rotate the
// credentials of its service account, delete. The cluster's credentials (`config`) are never
// shown: the server masks them and this page does not print `config` at all.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { Modal } from '../modal';
import { Confirm, Connection, enc, SettingsPage, useLoad } from './form';

const IN_CLUSTER = 'https://kubernetes.default.svc';
const state = (c: Json) => c.info?.connectionState || c.connectionState;

function Details({ cluster, onClose }: { cluster: Json; onClose: () => void }) {
  const c = cluster;
  const kv = (o?: Record<string, string>) =>
    o && Object.keys(o).length
      ? Object.entries(o)
          .sort()
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')
      : 'none';
  const cache = c.info?.cacheInfo || {};
  return (
    <Modal title={`Cluster ${c.name || c.server}`} onClose={onClose} wide>
      <dl class="fields" data-testid="cluster-details">
        <dt>Server</dt>
        <dd>
          <code>{c.server}</code>
        </dd>
        <dt>Name</dt>
        <dd>{c.name}</dd>
        <dt>Connection</dt>
        <dd>
          <Connection state={state(c)} />
        </dd>
        <dt>Server version</dt>
        <dd>{c.info?.serverVersion || c.serverVersion || 'unknown'}</dd>
        <dt>Applications</dt>
        <dd>{c.info?.applicationsCount ?? 0}</dd>
        <dt>Cached resources</dt>
        <dd>{cache.resourcesCount != null ? `${cache.resourcesCount} resources, ${cache.apisCount ?? '?'} APIs, synced ${cache.lastCacheSyncTime || 'never'}` : 'not cached yet'}</dd>
        <dt>Project</dt>
        <dd>{c.project || 'none (global)'}</dd>
        <dt>Namespaces</dt>
        <dd>{c.namespaces?.length ? c.namespaces.join(', ') : 'all'}</dd>
        <dt>Labels</dt>
        <dd>{kv(c.labels)}</dd>
        <dt>Annotations</dt>
        <dd>{kv(c.annotations)}</dd>
        <dt>Shard</dt>
        <dd>{c.shard ?? 'automatic'}</dd>
      </dl>
    </Modal>
  );
}

export function ClustersPage() {
  const clusters = useLoad(() => request('GET', '/api/v1/clusters').then((r) => r?.items || []));
  const [open, setOpen] = useState<Json | null>(null);
  const [confirm, setConfirm] = useState<{ c: Json; what: 'delete' | 'rotate' } | null>(null);
  const [notice, setNotice] = useState('');
  const items: Json[] = [...(clusters.data || [])].sort((a, b) => String(a.server).localeCompare(String(b.server)));
  return (
    <SettingsPage
      title="Clusters"
      error={clusters.error}
      loading={clusters.data === null}
      actions={
        <button type="button" class="btn" onClick={clusters.reload}>
          Refresh
        </button>
      }
    >
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <p class="muted">
        Add clusters with <code>plumb cluster add CONTEXT</code> (as <code>argocd cluster add</code>): the command creates the service account it connects with.
      </p>
      {clusters.data && !items.length && <p class="muted">No cluster.</p>}
      {items.length > 0 && (
        <table class="table" data-testid="clusters">
          <thead>
            <tr>
              <th>Name</th>
              <th>Server</th>
              <th>Version</th>
              <th>Connection</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.server} data-server={c.server}>
                <td>{c.name}</td>
                <td>
                  <code>{c.server}</code>
                </td>
                <td>{c.info?.serverVersion || c.serverVersion}</td>
                <td>
                  <Connection state={state(c)} />
                </td>
                <td class="row-actions">
                  <button type="button" class="btn" aria-label={`Details of ${c.name || c.server}`} onClick={() => setOpen(c)}>
                    Details
                  </button>
                  {c.server !== IN_CLUSTER && (
                    <button type="button" class="btn" aria-label={`Rotate the credentials of ${c.name || c.server}`} onClick={() => setConfirm({ c, what: 'rotate' })}>
                      Rotate auth
                    </button>
                  )}
                  <button type="button" class="btn danger" aria-label={`Delete ${c.name || c.server}`} onClick={() => setConfirm({ c, what: 'delete' })}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && <Details cluster={open} onClose={() => setOpen(null)} />}
      {confirm && (
        <Confirm
          title={confirm.what === 'delete' ? 'Delete the cluster' : 'Rotate the cluster credentials'}
          body={
            confirm.what === 'delete' ? (
              <p>
                Remove <code>{confirm.c.server}</code>? Its Applications can no longer be synced.
              </p>
            ) : (
              <p>
                Make a new bearer token for the service account of <code>{confirm.c.server}</code> and revoke the old one?
              </p>
            )
          }
          action={confirm.what === 'delete' ? 'Delete' : 'Rotate'}
          onClose={() => setConfirm(null)}
          onConfirm={async () => {
            const server = enc(confirm.c.server);
            if (confirm.what === 'delete') await request('DELETE', `/api/v1/clusters/${server}`);
            else {
              await request('POST', `/api/v1/clusters/${server}/rotate-auth`, {});
              setNotice(`Rotated the credentials of ${confirm.c.server}.`);
            }
            clusters.reload();
          }}
        />
      )}
    </SettingsPage>
  );
}
