// Repository certificates and known hosts (Argo's /settings/certs): SSH known-hosts entries
// and TLS certificates the repo server trusts, in Argo's RepositoryCertificate shape.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { FormDialog, SettingsPage, Text, useForm, useLoad, type Errors } from './form';
import { ItemTable, sortBy } from './table';

/**
 * Known-hosts lines as Argo's UI sends them: one certificate per host name of each line
 * (`host1,host2 ssh-ed25519 AAAA...`), the key base64-encoded; comments and blank lines skipped.
 * Throws with the line that is not a known-hosts entry.
 */
export function knownHosts(text: string): Json[] {
  const out: Json[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    if (parts.length < 3 || !/^(ssh-[a-z0-9]+|ecdsa-[a-z0-9-]+|sk-[a-z0-9@.-]+)$/i.test(parts[1]))
      throw new Error(`line ${i + 1} is not a known-hosts entry (host key-type key): ${line.slice(0, 60)}`);
    for (const host of parts[0].split(',')) out.push({ serverName: host, certType: 'ssh', certSubType: parts[1], certData: btoa(parts[2]) });
  });
  if (!out.length) throw new Error('No known-hosts entry: paste lines such as "github.com ssh-ed25519 AAAA…".');
  return out;
}

function AddSsh({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const form = useForm({ knownHosts: '' });
  const validate = (v: { knownHosts: string }): Errors => {
    try {
      knownHosts(v.knownHosts);
      return {};
    } catch (e) {
      return { knownHosts: (e as Error).message };
    }
  };
  return (
    <FormDialog
      title="Add SSH known hosts"
      form={form}
      onClose={onClose}
      submitLabel="Add"
      wide
      testid="ssh-form"
      onSubmit={() =>
        form.submit(
          validate,
          async (v) => {
            await request('POST', '/api/v1/certificates', { items: knownHosts(v.knownHosts) });
            onSaved();
          },
          [['knownHosts', /./]],
        )
      }
    >
      <Text form={form} name="knownHosts" label="SSH known hosts entries" rows={8} hint="One entry a line, as ssh-keyscan prints them." />
    </FormDialog>
  );
}

function AddTls({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const form = useForm({ serverName: '', certData: '' });
  const validate = (v: { serverName: string; certData: string }): Errors => ({
    serverName: v.serverName.trim() ? (/[\s/]/.test(v.serverName.trim()) ? 'A host name such as git.example.com, without scheme or path.' : '') : 'The repository server name is required.',
    certData: v.certData.includes('BEGIN CERTIFICATE') ? '' : 'Paste one or more PEM certificates (-----BEGIN CERTIFICATE-----).',
  });
  return (
    <FormDialog
      title="Add a TLS certificate"
      form={form}
      onClose={onClose}
      submitLabel="Add"
      wide
      testid="tls-form"
      onSubmit={() =>
        form.submit(
          validate,
          async (v) => {
            // certData is `bytes` in Argo's API: base64 of the PEM text.
            await request('POST', '/api/v1/certificates', { items: [{ serverName: v.serverName.trim(), certType: 'https', certSubType: '', certData: btoa(v.certData) }] });
            onSaved();
          },
          [
            ['serverName', /server ?name|host ?name|hostname/i],
            ['certData', /./],
          ],
        )
      }
    >
      <Text form={form} name="serverName" label="Repository server name" placeholder="git.example.com" />
      <Text form={form} name="certData" label="TLS certificate (PEM)" rows={8} />
    </FormDialog>
  );
}

export function CertsPage() {
  const certs = useLoad(() => request('GET', '/api/v1/certificates').then((r) => r?.items || []));
  const [adding, setAdding] = useState<'ssh' | 'tls' | null>(null);
  const saved = () => (setAdding(null), certs.reload());
  return (
    <SettingsPage
      title="Repository certificates and known hosts"
      error={certs.error}
      loading={certs.data === null}
      actions={
        <>
          <button type="button" class="btn primary" onClick={() => setAdding('ssh')}>
            Add SSH known hosts
          </button>
          <button type="button" class="btn" onClick={() => setAdding('tls')}>
            Add TLS certificate
          </button>
        </>
      }
    >
      <ItemTable
        testid="certificates"
        rows={sortBy(certs.data, (c) => `${c.serverName} ${c.certType} ${c.certSubType}`)}
        empty="No certificate."
        rowKey={(c) => `${c.serverName}/${c.certType}/${c.certSubType}`}
        rowData={(c) => ({ server: c.serverName, type: c.certType })}
        columns={[
          ['Server name', (c) => c.serverName],
          ['Type', (c) => c.certType],
          ['Subtype', (c) => c.certSubType],
          ['Info', (c) => <code class="wrap">{c.certInfo}</code>],
        ]}
        remove={{
          label: (c) => `Delete ${c.certType} ${c.certSubType} of ${c.serverName}`,
          title: 'Delete the certificate',
          question: (c) => (
            <>
              Delete the {c.certType} {c.certSubType} certificate of <code>{c.serverName}</code>?
            </>
          ),
          send: (c) => request('DELETE', `/api/v1/certificates?${new URLSearchParams({ hostNamePattern: c.serverName, certType: c.certType, certSubType: c.certSubType || '' })}`),
        }}
        onChanged={certs.reload}
      />
      {adding === 'ssh' && <AddSsh onClose={() => setAdding(null)} onSaved={saved} />}
      {adding === 'tls' && <AddTls onClose={() => setAdding(null)} onSaved={saved} />}
    </SettingsPage>
  );
}
