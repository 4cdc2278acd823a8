// Clusters (Argo's /settings/clusters): each with its connection state and version; connect one
// with a bearer token (cluster-connect.tsx); a cluster's page (cluster.tsx) shows and edits it.
// The cluster's credentials (`config`) are never shown: the server masks them and this page
// does not print `config` at all.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { Connection, enc, SettingsPage, useLoad } from './form';
import { ConnectCluster } from './cluster-connect';
import { clusterState, IN_CLUSTER, RotateAuth } from './cluster';
import { ItemTable, sortBy } from './table';

export function ClustersPage() {
  const clusters = useLoad(() => request('GET', '/api/v1/clusters').then((r) => r?.items || []));
  const [connecting, setConnecting] = useState(false);
  const [rotating, setRotating] = useState('');
  const [notice, setNotice] = useState('');
  const label = (c: Json) => c.name || c.server;
  return (
    <SettingsPage
      title="Clusters"
      error={clusters.error}
      loading={clusters.data === null}
      actions={
        <>
          <button type="button" class="btn primary" onClick={() => setConnecting(true)}>
            Connect cluster
          </button>
        </>
      }
      onRefresh={clusters.reload}
      notice={notice}
    >
      <p class="muted">
        Connect a cluster with the bearer token of one of its service accounts, or with <code>plumb cluster add CONTEXT</code> (as <code>argocd cluster add</code>), which creates that
        service account.
      </p>
      <ItemTable
        testid="clusters"
        rows={sortBy(clusters.data, (c) => String(c.server))}
        empty="No cluster."
        rowKey={(c) => c.server}
        rowData={(c) => ({ server: c.server })}
        columns={[
          ['Name', (c) => <a href={`/settings/clusters/${enc(c.server)}`}>{c.name}</a>],
          ['Server', (c) => <code>{c.server}</code>],
          ['Version', (c) => c.info?.serverVersion || c.serverVersion],
          ['Connection', (c) => <Connection state={clusterState(c)} />],
        ]}
        actions={(c) =>
          c.server !== IN_CLUSTER && (
            <button type="button" class="btn" aria-label={`Rotate the credentials of ${label(c)}`} onClick={() => setRotating(c.server)}>
              Rotate auth
            </button>
          )
        }
        remove={{
          label: (c) => `Delete ${label(c)}`,
          title: 'Delete the cluster',
          question: (c) => (
            <>
              Remove <code>{c.server}</code>? Its Applications can no longer be synced.
            </>
          ),
          send: (c) => request('DELETE', `/api/v1/clusters/${enc(c.server)}`),
        }}
        onChanged={clusters.reload}
      />
      {connecting && (
        <ConnectCluster
          onClose={() => setConnecting(false)}
          onSaved={(c) => {
            setConnecting(false);
            setNotice(`Connected ${c.name} (${c.server}); its connection state is in the list.`);
            clusters.reload();
          }}
        />
      )}
      {rotating && <RotateAuth server={rotating} onClose={() => setRotating('')} onDone={() => (setNotice(`Rotated the credentials of ${rotating}.`), clusters.reload())} />}
    </SettingsPage>
  );
}
