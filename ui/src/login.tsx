import { useState } from 'preact/hooks';
import { login, userInfo, type UserInfo } from './api';
import { navigate } from './router';
import { SsoButton, useSso } from './sso';

/**
 * The path of `returnUrl` when it is one of this site's, else the Applications page: a return_url
 * cannot send the user elsewhere. Resolved as the browser resolves it (so `//host`, `/\host` and
 * `https://host` are other origins), not judged by its first characters.
 */
export function sameSitePath(returnUrl: string): string {
  try {
    const u = new URL(returnUrl, location.origin);
    if (u.origin === location.origin && returnUrl.startsWith('/')) return u.pathname + u.search + u.hash;
  } catch {
    // Not a URL at all.
  }
  return '/applications';
}

/** Local accounts: POST /api/v1/session sets the `argocd.token` cookie. */
export function LoginPage({ returnUrl, onLoggedIn }: { returnUrl: string; onLoggedIn: (u: UserInfo) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const sso = useSso();

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await login(username, password);
      onLoggedIn(await userInfo());
      navigate(sameSitePath(returnUrl), true);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="login-wrap">
      <form class="login card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">
          <span class="brand-dot" aria-hidden="true" /> Plumb
        </h1>
        <p class="muted">Let's get stuff deployed!</p>
        {sso && (
          <>
            <SsoButton sso={sso} returnPath={sameSitePath(returnUrl)} />
            <p class="muted or">or</p>
          </>
        )}
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button class="btn primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}
