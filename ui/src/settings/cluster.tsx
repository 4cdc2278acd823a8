// One cluster's page (Argo's /settings/clusters/<server>): its general fields with Argo's edit
// panel (name, namespaces, project, labels, annotations: `PUT /api/v1/clusters/{server}` with
// `updatedFields`, so the credentials stay as stored), its connection state and cache, and
// rotate, invalidate the cache, delete. The credentials (`config`) are never shown: the server
// masks them and this page prints none of `config`.
import { useEffect, useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { navigate } from '../router';
import { Confirm, Connection, enc, FormDialog, SettingsPage, Text, useForm, useLoad } from './form';
import { CLUSTER_PATTERNS, checkScope, scopeFields, scopeValues, ScopeFields, mapText } from './cluster-fields';

export const IN_CLUSTER = 'https://kubernetes.default.svc';
export const clusterState = (c: Json) => c.info?.connectionState || c.connectionState;

/** The fields Argo's edit panel changes, and the project. */
const EDITED = ['name', 'namespaces', 'clusterResources', 'project', 'labels', 'annotations'];

function EditCluster({ cluster, onClose, onSaved }: { cluster: Json; onClose: () => void; onSaved: (c: Json) => void }) {
  const form = useForm(scopeValues(cluster));
  return (
    <FormDialog
      title={`Edit cluster ${cluster.name || cluster.server}`}
      form={form}
      onClose={onClose}
      submitLabel="Save"
      wide
      testid="cluster-edit-form"
      onSubmit={() =>
        form.submit(
          checkScope,
          async (v) => {
            // The cluster as the server answered it, with the edited fields replaced: the
            // server changes only `updatedFields` and keeps the stored credentials.
            const body = { ...cluster, ...Object.fromEntries(EDITED.map((k) => [k, undefined])), ...scopeFields(v) };
            const q = EDITED.map((f) => `updatedFields=${f}`).join('&');
            onSaved(await request('PUT', `/api/v1/clusters/${enc(cluster.server)}?${q}`, body));
          },
          CLUSTER_PATTERNS,
        )
      }
    >
      <Text form={form} name="name" label="Name" />
      <ScopeFields form={form} annotations />
    </FormDialog>
  );
}

const kv = (m?: Record<string, string>) => mapText(m).split('\n').filter(Boolean).join(', ') || 'none';

function General({ c }: { c: Json }) {
  const cache = c.info?.cacheInfo || {};
  return (
    <dl class="fields" data-testid="cluster-details">
      <dt>Server</dt>
      <dd>
        <code>{c.server}</code>
      </dd>
      <dt>Name</dt>
      <dd data-field="name">{c.name}</dd>
      <dt>Namespaces</dt>
      <dd data-field="namespaces">{c.namespaces?.length ? c.namespaces.join(', ') : 'all namespaces'}</dd>
      <dt>Cluster-scoped resources</dt>
      <dd>{c.namespaces?.length ? (c.clusterResources ? 'managed' : 'not managed') : 'managed'}</dd>
      <dt>Project</dt>
      <dd data-field="project">{c.project || 'none (global)'}</dd>
      <dt>Labels</dt>
      <dd data-field="labels">{kv(c.labels)}</dd>
      <dt>Annotations</dt>
      <dd data-field="annotations">{kv(c.annotations)}</dd>
      <dt>Connection</dt>
      <dd>
        <Connection state={clusterState(c)} />
      </dd>
      <dt>Server version</dt>
      <dd>{c.info?.serverVersion || c.serverVersion || 'unknown'}</dd>
      <dt>Applications</dt>
      <dd>{c.info?.applicationsCount ?? 0}</dd>
      <dt>Cached resources</dt>
      <dd>{cache.resourcesCount != null ? `${cache.resourcesCount} resources, ${cache.apisCount ?? '?'} APIs, synced ${cache.lastCacheSyncTime || 'never'}` : 'not cached yet'}</dd>
      <dt>Shard</dt>
      <dd>{c.shard ?? 'automatic'}</dd>
    </dl>
  );
}

export function ClusterPage({ server }: { server: string }) {
  const path = `/api/v1/clusters/${enc(server)}?id.type=url`;
  const loaded = useLoad(() => request('GET', path), [server]);
  // What the page shows: the last load, or the saved cluster until the next load (the answer
  // to an update holds no connection state: the old one is kept meanwhile).
  const [c, setCluster] = useState<Json | null>(null);
  useEffect(() => setCluster(loaded.data), [loaded.data]);
  const [open, setOpen] = useState<'edit' | 'rotate' | 'delete' | null>(null);
  const [notice, setNotice] = useState('');
  const reload = loaded.reload;
  return (
    <SettingsPage
      title={`Cluster ${c?.name || server}`}
      parent={['/settings/clusters', 'Clusters']}
      onRefresh={reload}
      notice={notice}
      error={loaded.error}
      loading={!c}
      actions={
        c && (
          <>
            <button type="button" class="btn primary" onClick={() => setOpen('edit')}>
              Edit
            </button>
            {server !== IN_CLUSTER && (
              <button type="button" class="btn" onClick={() => setOpen('rotate')}>
                Rotate auth
              </button>
            )}
            <button
              type="button"
              class="btn"
              onClick={async () => {
                await request('POST', `/api/v1/clusters/${enc(server)}/invalidate-cache`, {}).catch((e) => setNotice((e as Error).message));
                reload();
              }}
            >
              Invalidate cache
            </button>
            <button type="button" class="btn danger" onClick={() => setOpen('delete')}>
              Delete
            </button>
          </>
        )
      }
    >
      {c && <General c={c} />}
      {open === 'edit' && c && (
        <EditCluster
          cluster={c}
          onClose={() => setOpen(null)}
          onSaved={(next) => {
            setOpen(null);
            setCluster({ ...next, info: c?.info, connectionState: c?.connectionState, serverVersion: c?.serverVersion });
            setNotice(`Saved cluster ${next.name}.`);
            loaded.reload();
          }}
        />
      )}
      {open === 'rotate' && <RotateAuth server={server} onClose={() => setOpen(null)} onDone={() => (setNotice(`Rotated the credentials of ${server}.`), reload())} />}
      {open === 'delete' && (
        <Confirm
          title="Delete the cluster"
          body={
            <p>
              Remove <code>{server}</code>? Its Applications can no longer be synced.
            </p>
          }
          action="Delete"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await request('DELETE', `/api/v1/clusters/${enc(server)}`);
            navigate('/settings/clusters');
          }}
        />
      )}
    </SettingsPage>
  );
}

/** Rotate the bearer token of the cluster's service account (`argocd-manager`), after a confirm. */
export function RotateAuth({ server, onClose, onDone }: { server: string; onClose: () => void; onDone: () => void }) {
  return (
    <Confirm
      title="Rotate the cluster credentials"
      body={
        <p>
          Make a new bearer token for the service account of <code>{server}</code> and revoke the old one?
        </p>
      }
      action="Rotate"
      onClose={onClose}
      onConfirm={async () => {
        await request('POST', `/api/v1/clusters/${enc(server)}/rotate-auth`, {});
        onDone();
      }}
    />
  );
}
