// GnuPG public keys (Argo's /settings/gpgkeys): the keys commits may be signed with.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { Confirm, enc, FormDialog, SettingsPage, Text, useForm, useLoad } from './form';

function AddKey({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const form = useForm({ keyData: '' });
  return (
    <FormDialog
      title="Add a GnuPG public key"
      form={form}
      onClose={onClose}
      submitLabel="Add"
      wide
      testid="gpg-form"
      onSubmit={() =>
        form.submit(
          (v) => ({ keyData: /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*-----END PGP PUBLIC KEY BLOCK-----/.test(v.keyData) ? '' : 'Paste an ASCII-armored public key (-----BEGIN PGP PUBLIC KEY BLOCK----- … END …).' }),
          async (v) => {
            await request('POST', '/api/v1/gpgkeys', { keyData: v.keyData });
            onSaved();
          },
          [['keyData', /./]],
        )
      }
    >
      <Text form={form} name="keyData" label="GnuPG public key data (ASCII-armored)" rows={12} />
    </FormDialog>
  );
}

export function GpgKeysPage() {
  const keys = useLoad(() => request('GET', '/api/v1/gpgkeys').then((r) => r?.items || []));
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<Json | null>(null);
  const items: Json[] = [...(keys.data || [])].sort((a, b) => String(a.keyID).localeCompare(String(b.keyID)));
  return (
    <SettingsPage
      title="GnuPG keys"
      error={keys.error}
      loading={keys.data === null}
      actions={
        <button type="button" class="btn primary" onClick={() => setAdding(true)}>
          Add GnuPG key
        </button>
      }
    >
      {keys.data && !items.length && <p class="muted">No GnuPG key.</p>}
      {items.length > 0 && (
        <table class="table" data-testid="gpgkeys">
          <thead>
            <tr>
              <th>Key ID</th>
              <th>Type</th>
              <th>Identity</th>
              <th>Fingerprint</th>
              <th>Trust</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((k) => (
              <tr key={k.keyID} data-key={k.keyID}>
                <td>
                  <code>{k.keyID}</code>
                </td>
                <td>{k.subType}</td>
                <td>{k.owner}</td>
                <td>
                  <code class="wrap">{k.fingerprint}</code>
                </td>
                <td>{k.trust}</td>
                <td>
                  <button type="button" class="btn danger" aria-label={`Delete key ${k.keyID}`} onClick={() => setDeleting(k)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {adding && <AddKey onClose={() => setAdding(false)} onSaved={() => (setAdding(false), keys.reload())} />}
      {deleting && (
        <Confirm
          title="Delete the GnuPG key"
          body={
            <p>
              Delete key <code>{deleting.keyID}</code> ({deleting.owner})? Commits signed with it are no longer verified.
            </p>
          }
          action="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await request('DELETE', `/api/v1/gpgkeys?keyID=${enc(deleting.keyID)}`);
            keys.reload();
          }}
        />
      )}
    </SettingsPage>
  );
}
