// "Connect cluster": a cluster added from the page with a bearer token (ClusterService Create,
// `POST /api/v1/clusters`). Argo CD's own UI only edits clusters (`argocd cluster add` adds
// them, creating a service account); this form takes the token of an account that exists
// already. The server tries the credentials before it saves, so a wrong token, CA or URL is
// refused next to its field. The token goes to the server once: the dialog is dropped when it
// closes and nothing on the page ever holds it again.
import type { Json } from '../api';
import { request } from '../api';
import { Check, FormDialog, Text, useForm, type Errors } from './form';
import { CLUSTER_PATTERNS, checkScope, scopeFields, scopeValues, ScopeFields } from './cluster-fields';

const blank = { ...scopeValues(), server: '', bearerToken: '', caData: '', insecure: false, upsert: false };
type Values = typeof blank;

export function checkConnect(v: Values): Errors {
  let server = '';
  try {
    const u = new URL(v.server.trim());
    if (u.protocol !== 'https:' && u.protocol !== 'http:') server = 'An https:// URL of the API server.';
  } catch {
    server = v.server.trim() ? 'An https:// URL of the API server, such as https://10.0.0.1:6443.' : 'The API server URL is required.';
  }
  const ca = v.caData.trim();
  const scope = checkScope(v);
  // In the form's order: the focus goes to the first wrong field.
  return {
    name: scope.name,
    server,
    bearerToken: v.bearerToken.trim() ? '' : 'A bearer token is required (kubectl create token SERVICE_ACCOUNT).',
    caData: ca && !/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/.test(ca) ? 'Paste PEM certificates (-----BEGIN CERTIFICATE-----).' : ca && v.insecure ? 'Either a CA certificate or skipping verification, not both.' : '',
    ...scope,
  };
}

/** The API's `Cluster` of the form's values; `caData` is bytes in Argo's API: base64 of the PEM. */
export function clusterOf(v: Values): Json {
  const tls: Json = { insecure: v.insecure };
  if (v.caData.trim()) tls.caData = btoa(`${v.caData.trim()}\n`);
  return { ...scopeFields(v), server: v.server.trim().replace(/\/+$/, ''), config: { bearerToken: v.bearerToken.trim(), tlsClientConfig: tls } };
}

export function ConnectCluster({ onClose, onSaved }: { onClose: () => void; onSaved: (c: Json) => void }) {
  const form = useForm(blank);
  return (
    <FormDialog
      title="Connect a cluster"
      form={form}
      onClose={onClose}
      submitLabel="Connect"
      wide
      testid="cluster-form"
      onSubmit={() =>
        form.submit(
          checkConnect,
          async (v) => {
            const saved = await request('POST', `/api/v1/clusters?upsert=${v.upsert}`, clusterOf(v));
            onSaved(saved);
          },
          CLUSTER_PATTERNS,
        )
      }
    >
      <div class="form-grid">
        <Text form={form} name="name" label="Name" placeholder="staging" />
        <Text form={form} name="server" label="API server URL" placeholder="https://10.0.0.1:6443" />
      </div>
      <Text form={form} name="bearerToken" label="Bearer token" type="password" secret hint="The token of a service account of that cluster (kubectl create token NAME); not shown again." />
      <Text form={form} name="caData" label="CA certificate (PEM, optional)" rows={4} hint="The certificate authority of the API server; empty: the system's." />
      <Check form={form} name="insecure" label="Skip server certificate verification (insecure)" />
      <ScopeFields form={form} />
      <Check form={form} name="upsert" label="Replace the cluster of this URL if one exists (upsert)" />
    </FormDialog>
  );
}
