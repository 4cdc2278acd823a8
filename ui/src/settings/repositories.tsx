// Repositories and repository credential templates (Argo's /settings/repos): the list with each
// repository's connection state, connect over HTTPS, SSH or as a GitHub App, delete.
// Credentials go to the server once and are never shown again: the form is dropped on close,
// and the lists show only what the server returns (it never returns a credential).
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { Check, Connection, enc, FormDialog, Select, SettingsPage, Text, useForm, useLoad, type Errors } from './form';
import { ItemTable, sortBy, type Column } from './table';

type Method = 'https' | 'ssh' | 'github';
type Kind = 'repositories' | 'repocreds';

const blank = {
  method: 'https' as Method,
  type: 'git',
  name: '',
  project: '',
  url: '',
  username: '',
  password: '',
  bearerToken: '',
  sshPrivateKey: '',
  githubAppID: '',
  githubAppInstallationID: '',
  githubAppPrivateKey: '',
  githubAppEnterpriseBaseUrl: '',
  tlsClientCertData: '',
  tlsClientCertKey: '',
  insecure: false,
  enableLfs: false,
  enableOCI: false,
  insecureOCIForceHttp: false,
  forceHttpBasicAuth: false,
  proxy: '',
  noProxy: '',
};
type Values = typeof blank;

/** Which fields each way of connecting sends; the others are left out of the request. */
const METHOD_FIELDS: Record<Method, (keyof Values)[]> = {
  https: ['username', 'password', 'bearerToken', 'tlsClientCertData', 'tlsClientCertKey', 'forceHttpBasicAuth'],
  ssh: ['sshPrivateKey'],
  github: ['githubAppID', 'githubAppInstallationID', 'githubAppPrivateKey', 'githubAppEnterpriseBaseUrl', 'tlsClientCertData', 'tlsClientCertKey'],
};
const COMMON: (keyof Values)[] = ['type', 'proxy', 'noProxy', 'enableOCI', 'insecureOCIForceHttp'];
// Repository credential templates have no name, project, insecure or LFS flag (Argo's RepoCreds).
const REPO_ONLY: (keyof Values)[] = ['name', 'project', 'insecure', 'enableLfs'];

// Names and addresses lose stray blanks; credentials are sent exactly as typed.
const TRIMMED = new Set<keyof Values>(['type', 'name', 'project', 'username', 'proxy', 'noProxy', 'githubAppEnterpriseBaseUrl']);

/** The request body, in Argo's Repository / RepoCreds shape: only what was set. */
export function body(v: Values, kind: Kind): Json {
  const keys = [...COMMON, ...METHOD_FIELDS[v.method], ...(kind === 'repositories' ? REPO_ONLY : [])];
  const out: Json = kind === 'repositories' ? { repo: v.url.trim() } : { url: v.url.trim() };
  for (const k of keys) {
    const x = v[k];
    if (x === '' || x === false) continue;
    out[k] = k === 'githubAppID' || k === 'githubAppInstallationID' ? Number(x) : typeof x === 'string' && TRIMMED.has(k) ? x.trim() : x;
  }
  return out;
}

export function validate(v: Values): Errors {
  const e: Errors = {};
  const url = v.url.trim();
  if (!url) e.url = 'The repository URL is required.';
  else if (v.method !== 'ssh' && /^(git@|ssh:\/\/)/.test(url)) e.url = 'This is an SSH URL: choose the SSH connection method.';
  else if (v.method === 'ssh' && /^https?:\/\//.test(url)) e.url = 'An SSH repository URL looks like git@host:org/repo.git or ssh://host/repo.';
  if (v.type === 'helm' && !v.name.trim() && v.method !== 'github') e.name = 'A Helm repository needs a name.';
  if (v.method === 'https') {
    if (v.username && !v.password) e.password = 'A password is needed with a username.';
    if (v.password && !v.username) e.username = 'A username is needed with a password.';
    if (v.bearerToken && (v.username || v.password)) e.bearerToken = 'A bearer token replaces the username and password: give one or the other.';
  }
  if (v.method === 'ssh' && !v.sshPrivateKey.includes('PRIVATE KEY')) e.sshPrivateKey = 'Paste the private key (PEM or OpenSSH, with its BEGIN and END lines).';
  if (v.method === 'github') {
    if (!/^\d+$/.test(v.githubAppID)) e.githubAppID = 'The GitHub App ID is a number.';
    // Empty: found from the repository URL's organisation, as Argo CD 3.6 does.
    if (v.githubAppInstallationID && !/^\d+$/.test(v.githubAppInstallationID)) e.githubAppInstallationID = 'The installation ID is a number (or empty, to find it from the organisation).';
    if (!v.githubAppPrivateKey.includes('PRIVATE KEY')) e.githubAppPrivateKey = "Paste the GitHub App's private key (PEM).";
    if (v.githubAppEnterpriseBaseUrl && !/^https?:\/\//.test(v.githubAppEnterpriseBaseUrl)) e.githubAppEnterpriseBaseUrl = 'An URL such as https://ghe.example.com/api/v3.';
  }
  if (v.method !== 'ssh' && !!v.tlsClientCertData !== !!v.tlsClientCertKey)
    e[v.tlsClientCertData ? 'tlsClientCertKey' : 'tlsClientCertData'] = 'A TLS client certificate needs both its certificate and its key.';
  if (v.proxy && !/^(https?|socks5):\/\//.test(v.proxy)) e.proxy = 'A proxy URL such as http://proxy:3128.';
  return e;
}

/** Where a refusal of the server belongs, from the words of its message. */
function patterns(v: Values): [string, RegExp][] {
  const creds: [string, RegExp][] =
    v.method === 'ssh'
      ? [['sshPrivateKey', /ssh|private key|host key|knownhosts|known_hosts/i]]
      : v.method === 'github'
        ? [
            ['githubAppPrivateKey', /private key|github app/i],
            ['githubAppID', /app ?id/i],
          ]
        : [
            ['bearerToken', /bearer/i],
            ['password', /authenticat|password|credential|401|403|username/i],
          ];
  return [
    ['tlsClientCertData', /tls client|client cert/i],
    ...creds,
    ['proxy', /proxy/i],
    ['project', /project/i],
    ['name', /\bname\b/i],
    ['url', /repo|url|connect|host|git|helm|oci/i],
  ];
}

function RepoForm({ kind, onClose, onSaved }: { kind: Kind; onClose: () => void; onSaved: (url: string) => void }) {
  const form = useForm<Values>({ ...blank });
  const v = form.values;
  const save = () =>
    form.submit(
      validate,
      async (vals) => {
        await request('POST', `/api/v1/${kind}`, body(vals, kind));
        onSaved(vals.url.trim());
      },
      patterns(v),
    );
  const repo = kind === 'repositories';
  return (
    <FormDialog
      title={repo ? 'Connect a repository' : 'Add a credential template'}
      form={form}
      onClose={onClose}
      onSubmit={save}
      submitLabel={repo ? 'Connect' : 'Save'}
      wide
      testid="repo-form"
    >
      <div class="form-grid">
        <fieldset>
          <legend>Repository</legend>
          <Select form={form} name="method" label="Connection method" options={[['https', 'HTTPS'], ['ssh', 'SSH'], ['github', 'GitHub App']]} />
          <Select form={form} name="type" label="Type" options={['git', 'helm', 'oci']} />
          {repo && <Text form={form} name="name" label="Name (optional for Git)" />}
          {repo && <Text form={form} name="project" label="Project (optional)" />}
          <Text form={form} name="url" label={repo ? 'Repository URL' : 'URL prefix'} placeholder={v.method === 'ssh' ? 'git@github.com:org/repo.git' : 'https://github.com/org/repo.git'} />
          <Text form={form} name="proxy" label="Proxy (optional)" placeholder="http://proxy:3128" />
          <Text form={form} name="noProxy" label="No proxy (optional)" placeholder=".internal,10.0.0.0/8" />
        </fieldset>
        <fieldset>
          <legend>Credentials</legend>
          {v.method === 'https' && (
            <>
              <Text form={form} name="username" label="Username (optional)" />
              <Text form={form} name="password" label="Password (optional)" type="password" secret />
              <Text form={form} name="bearerToken" label="Bearer token (optional, instead of a username)" type="password" secret />
            </>
          )}
          {v.method === 'ssh' && <Text form={form} name="sshPrivateKey" label="SSH private key" rows={6} secret />}
          {v.method === 'github' && (
            <>
              <Text form={form} name="githubAppID" label="GitHub App ID" />
              <Text form={form} name="githubAppInstallationID" label="GitHub App installation ID (optional)" />
              <Text form={form} name="githubAppPrivateKey" label="GitHub App private key" rows={5} secret />
              <Text form={form} name="githubAppEnterpriseBaseUrl" label="GitHub Enterprise base URL (optional)" />
            </>
          )}
          {v.method !== 'ssh' && (
            <>
              <Text form={form} name="tlsClientCertData" label="TLS client certificate (optional, PEM)" rows={3} />
              <Text form={form} name="tlsClientCertKey" label="TLS client certificate key (optional, PEM)" rows={3} secret />
            </>
          )}
        </fieldset>
        <fieldset>
          <legend>Options</legend>
          {repo && <Check form={form} name="insecure" label="Skip server verification (insecure)" />}
          {repo && v.type === 'git' && <Check form={form} name="enableLfs" label="Enable LFS support (Git only)" />}
          {v.type === 'helm' && <Check form={form} name="enableOCI" label="Enable OCI (Helm only)" />}
          {v.type === 'oci' && <Check form={form} name="insecureOCIForceHttp" label="Plain HTTP for OCI (insecure)" />}
          {v.method === 'https' && <Check form={form} name="forceHttpBasicAuth" label="Force HTTP basic authentication" />}
        </fieldset>
      </div>
    </FormDialog>
  );
}

/** The repositories or the credential templates, each with its Delete. */
function RepoTable({ kind, items, onChanged }: { kind: Kind; items: Json[] | null; onChanged: () => void }) {
  const repo = kind === 'repositories';
  const url = (r: Json): string => (repo ? r.repo : r.url);
  const columns: Column[] = [
    ['Type', (r) => r.type || 'git'],
    ...(repo ? [['Name', (r: Json) => r.name] as Column] : []),
    [repo ? 'Repository' : 'URL prefix', (r) => <code>{url(r)}</code>],
    ...(repo ? ([['Project', (r: Json) => r.project], ['Connection', (r: Json) => <Connection state={r.connectionState} />]] as Column[]) : []),
  ];
  return (
    <ItemTable
      testid={kind}
      rows={sortBy(items, (r) => String(url(r)))}
      empty={repo ? 'No repository is connected.' : 'No credential template.'}
      rowKey={url}
      rowData={(r) => ({ url: url(r) })}
      columns={columns}
      remove={{
        label: (r) => `Delete ${url(r)}`,
        title: repo ? 'Delete the repository' : 'Delete the credential template',
        question: (r) => (
          <>
            Delete <code>{url(r)}</code>? Applications that use it lose its credentials.
          </>
        ),
        send: (r) => request('DELETE', repo ? `/api/v1/repositories/${enc(r.repo)}${r.project ? `?appProject=${enc(r.project)}` : ''}` : `/api/v1/repocreds/${enc(r.url)}`),
      }}
      onChanged={onChanged}
    />
  );
}

export function ReposPage() {
  // forceRefresh: the connection state is checked again rather than read from the cache.
  const repos = useLoad(() => request('GET', '/api/v1/repositories?forceRefresh=true').then((r) => r?.items || []));
  const creds = useLoad(() => request('GET', '/api/v1/repocreds').then((r) => r?.items || []));
  const [adding, setAdding] = useState<Kind | null>(null);
  const [notice, setNotice] = useState('');
  return (
    <SettingsPage
      title="Repositories"
      error={repos.error || creds.error}
      loading={repos.data === null}
      actions={
        <>
          <button type="button" class="btn primary" onClick={() => setAdding('repositories')}>
            Connect repository
          </button>
          <button type="button" class="btn" onClick={() => setAdding('repocreds')}>
            Add credential template
          </button>
        </>
      }
      onRefresh={() => (repos.reload(), creds.reload())}
      notice={notice}
    >
      <RepoTable kind="repositories" items={repos.data} onChanged={repos.reload} />
      <h2>Credential templates</h2>
      <p class="muted">Repositories whose URL starts with a template's prefix use its credentials.</p>
      <RepoTable kind="repocreds" items={creds.data} onChanged={creds.reload} />
      {adding && (
        <RepoForm
          kind={adding}
          onClose={() => setAdding(null)}
          onSaved={(url) => {
            setNotice(adding === 'repositories' ? `Connected ${url}; its connection state is in the list.` : `Saved the credential template for ${url}.`);
            setAdding(null);
            (adding === 'repositories' ? repos : creds).reload();
          }}
        />
      )}
    </SettingsPage>
  );
}
