// GnuPG public keys (Argo's /settings/gpgkeys): the keys commits may be signed with.
import { useState } from 'preact/hooks';
import { request } from '../api';
import { enc, FormDialog, SettingsPage, Text, useForm, useLoad } from './form';
import { ItemTable, sortBy } from './table';

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
      <ItemTable
        testid="gpgkeys"
        rows={sortBy(keys.data, (k) => String(k.keyID))}
        empty="No GnuPG key."
        rowKey={(k) => k.keyID}
        rowData={(k) => ({ key: k.keyID })}
        columns={[
          ['Key ID', (k) => <code>{k.keyID}</code>],
          ['Type', (k) => k.subType],
          ['Identity', (k) => k.owner],
          ['Fingerprint', (k) => <code class="wrap">{k.fingerprint}</code>],
          ['Trust', (k) => k.trust],
        ]}
        remove={{
          label: (k) => `Delete key ${k.keyID}`,
          title: 'Delete the GnuPG key',
          question: (k) => (
            <>
              Delete key <code>{k.keyID}</code> ({k.owner})? Commits signed with it are no longer verified.
            </>
          ),
          send: (k) => request('DELETE', `/api/v1/gpgkeys?keyID=${enc(k.keyID)}`),
        }}
        onChanged={keys.reload}
      />
      {adding && <AddKey onClose={() => setAdding(false)} onSaved={() => (setAdding(false), keys.reload())} />}
    </SettingsPage>
  );
}
