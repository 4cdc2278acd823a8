// Local accounts and their API tokens (Argo's /settings/accounts), and the caller's own
// identity with its password change (Argo's /user-info).
import { useState } from 'preact/hooks';
import { request, userInfo, type Json } from '../api';
import { enc, FormDialog, SettingsPage, ShowOnce, Text, useForm, useLoad } from './form';
import { ItemTable } from './table';

/** `30m`, `12h`, `7d` or a number of seconds into seconds; empty or `0` is never; null if neither. */
export function seconds(s: string): number | null {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/.exec(s);
  if (!s.trim()) return 0;
  if (!m) return null;
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}

const when = (unix?: number | string) => (unix && Number(unix) > 0 ? new Date(Number(unix) * 1000).toISOString().replace('.000Z', 'Z') : 'never');

export function AccountsPage() {
  const accounts = useLoad(() => request('GET', '/api/v1/account').then((r) => r?.items || []));
  const items: Json[] = [...(accounts.data || [])].sort((a, b) => String(a.name).localeCompare(String(b.name)));
  return (
    <SettingsPage title="Accounts" error={accounts.error} loading={accounts.data === null}>
      <table class="table" data-testid="accounts">
        <thead>
          <tr>
            <th>Name</th>
            <th>Enabled</th>
            <th>Capabilities</th>
            <th>Tokens</th>
          </tr>
        </thead>
        <tbody>
          {items.map((a) => (
            <tr key={a.name} data-account={a.name}>
              <td>
                <a href={`/settings/accounts/${enc(a.name)}`}>{a.name}</a>
              </td>
              <td>{a.enabled ? 'yes' : 'no'}</td>
              <td>{(a.capabilities || []).join(', ') || 'none'}</td>
              <td>{(a.tokens || []).length}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </SettingsPage>
  );
}

function NewToken({ path, extra, onClose, onCreated }: { path: string; extra?: Json; onClose: () => void; onCreated: (token: string) => void }) {
  const form = useForm({ id: '', expiresIn: '', description: '' });
  return (
    <FormDialog
      title="Generate a token"
      form={form}
      onClose={onClose}
      submitLabel="Generate"
      testid="token-form"
      onSubmit={() =>
        form.submit(
          (v) => ({ expiresIn: seconds(v.expiresIn) === null ? 'A duration such as 30m, 12h or 7d, a number of seconds, or empty for no expiry.' : '', id: v.id.length > 128 ? 'At most 128 characters.' : '' }),
          async (v) => {
            const body: Json = { ...extra, expiresIn: seconds(v.expiresIn) };
            if (v.id.trim()) body.id = v.id.trim();
            if (extra && v.description.trim()) body.description = v.description.trim();
            const r = await request('POST', path, body);
            onCreated(r?.token || '');
          },
          [
            ['expiresIn', /expires/i],
            ['id', /\bid\b|already exists/i],
          ],
        )
      }
    >
      <Text form={form} name="id" label="Token ID (optional)" hint="A name to tell the token apart; a random one if empty." />
      <Text form={form} name="expiresIn" label="Expires in (optional)" placeholder="7d" hint="30m, 12h, 7d or seconds; empty: never." />
      {extra && <Text form={form} name="description" label="Description (optional)" />}
    </FormDialog>
  );
}

/** A list of tokens (an account's or a project role's) with generate and delete. */
export function Tokens({
  tokens,
  createPath,
  extra,
  deletePath,
  onChanged,
}: {
  tokens: Json[];
  createPath: string;
  extra?: Json;
  deletePath: (t: Json) => string;
  onChanged: () => void;
}) {
  const [adding, setAdding] = useState(false);
  const [token, setToken] = useState('');
  const issued = (t: Json) => Number(t.iat ?? t.issuedAt);
  return (
    <div class="tokens">
      <ItemTable
        testid="tokens"
        rows={[...tokens].sort((a, b) => issued(a) - issued(b))}
        empty="No token."
        rowKey={(t) => t.id || String(t.iat)}
        rowData={(t) => ({ token: t.id })}
        columns={[
          ['ID', (t) => t.id],
          ['Issued', (t) => when(t.iat ?? t.issuedAt)],
          ['Expires', (t) => when(t.exp ?? t.expiresAt)],
        ]}
        remove={{
          label: (t) => `Delete token ${t.id || t.iat}`,
          title: 'Delete the token',
          question: (t) => `Delete token ${t.id || t.iat}? Whatever uses it is refused from now on.`,
          send: (t) => request('DELETE', deletePath(t)),
        }}
        onChanged={onChanged}
      />
      <button type="button" class="btn" onClick={() => setAdding(true)}>
        Generate token
      </button>
      {adding && (
        <NewToken
          path={createPath}
          extra={extra}
          onClose={() => setAdding(false)}
          onCreated={(t) => {
            setAdding(false);
            setToken(t);
            onChanged();
          }}
        />
      )}
      {token && <ShowOnce title="New token" value={token} onClose={() => setToken('')} />}
    </div>
  );
}

export function AccountPage({ name }: { name: string }) {
  const account = useLoad(() => request('GET', `/api/v1/account/${enc(name)}`), [name]);
  const a = account.data;
  return (
    <SettingsPage title={`Account ${name}`} parent={['/settings/accounts', 'Accounts']} error={account.error} loading={!a}>
      {a && (
        <>
          <dl class="fields">
            <dt>Enabled</dt>
            <dd>{a.enabled ? 'yes' : 'no'}</dd>
            <dt>Capabilities</dt>
            <dd>{(a.capabilities || []).join(', ') || 'none'}</dd>
          </dl>
          <h2>Tokens</h2>
          <Tokens
            tokens={a.tokens || []}
            createPath={`/api/v1/account/${enc(name)}/token`}
            deletePath={(t) => `/api/v1/account/${enc(name)}/token/${enc(t.id)}`}
            onChanged={account.reload}
          />
        </>
      )}
    </SettingsPage>
  );
}

function PasswordForm({ username, onClose, onDone }: { username: string; onClose: () => void; onDone: () => void }) {
  const form = useForm({ currentPassword: '', newPassword: '', confirmPassword: '' });
  return (
    <FormDialog
      title="Update password"
      form={form}
      onClose={onClose}
      submitLabel="Save"
      testid="password-form"
      onSubmit={() =>
        form.submit(
          (v) => ({
            currentPassword: v.currentPassword ? '' : 'Your current password is required.',
            newPassword: v.newPassword ? '' : 'A new password is required.',
            confirmPassword: v.confirmPassword === v.newPassword ? '' : 'The two new passwords differ.',
          }),
          async (v) => {
            await request('PUT', '/api/v1/account/password', { name: username, currentPassword: v.currentPassword, newPassword: v.newPassword });
            onDone();
          },
          [
            ['currentPassword', /current password/i],
            ['newPassword', /new password|password/i],
          ],
        )
      }
    >
      <Text form={form} name="currentPassword" label="Current password" type="password" secret />
      <Text form={form} name="newPassword" label="New password" type="password" secret />
      <Text form={form} name="confirmPassword" label="Confirm the new password" type="password" secret />
    </FormDialog>
  );
}

export function UserInfoPage() {
  const info = useLoad(() => userInfo());
  const [changing, setChanging] = useState(false);
  const [notice, setNotice] = useState('');
  const u = info.data;
  return (
    <SettingsPage
      title="User info"
      notice={notice}
      error={info.error}
      loading={!u}
      actions={
        u?.iss === 'argocd' && (
          <button type="button" class="btn" onClick={() => setChanging(true)}>
            Update password
          </button>
        )
      }
    >
      {u && (
        <dl class="fields" data-testid="userinfo">
          <dt>Username</dt>
          <dd>{u.username}</dd>
          <dt>Issuer</dt>
          <dd>{u.iss}</dd>
          <dt>Groups</dt>
          <dd>{u.groups?.length ? u.groups.join(', ') : 'none'}</dd>
        </dl>
      )}
      {changing && u?.username && (
        <PasswordForm
          username={u.username}
          onClose={() => setChanging(false)}
          onDone={() => {
            setChanging(false);
            setNotice('Password updated.');
          }}
        />
      )}
    </SettingsPage>
  );
}
