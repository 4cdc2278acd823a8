// Single sign-on in the UI: the login button named after the provider (as Argo's login page
// names it), and the dialog that asks for a new login when the session ends, over the page so
// nothing on it (filters, scroll, an open panel) is lost.
import { useEffect, useState } from 'preact/hooks';
import { login, settings, type Json } from './api';
import { Modal } from './modal';

export interface Sso {
  /** The button's text: "Log in via <provider>". */
  label: string;
  /** Why SSO cannot be used now (the server's `ssoUnavailable`), or empty. */
  unavailable: string;
}

/**
 * What the settings say about SSO, as Argo's login page reads them: `oidcConfig.name`, else the
 * one Dex connector's name, else a generic label; null when neither is configured (a reason
 * without a configuration, an `oidc.config` that does not parse, still shows).
 */
export function ssoOf(s: Json): Sso | null {
  const why = typeof s?.ssoUnavailable === 'string' ? s.ssoUnavailable : '';
  const connectors: { name?: string }[] = s?.dexConfig?.connectors || [];
  let label = '';
  if (s?.oidcConfig) label = `Log in via ${s.oidcConfig.name || 'SSO'}`;
  else if (s?.dexConfig) label = connectors.length === 1 && connectors[0].name ? `Log in via ${connectors[0].name}` : 'Log in via SSO';
  else if (why) label = 'Log in via SSO';
  return label ? { label, unavailable: why } : null;
}

export function useSso(): Sso | null {
  const [sso, setSso] = useState<Sso | null>(null);
  useEffect(() => {
    let live = true;
    settings().then((s) => live && setSso(ssoOf(s)));
    return () => {
      live = false;
    };
  }, []);
  return sso;
}

/** `/auth/login` with the page to come back to; the server accepts paths on this site only. */
export const ssoHref = (returnPath: string) => `/auth/login?return_url=${encodeURIComponent(returnPath)}`;

/** The SSO button (a link: the login is a full-page round trip through the provider). */
export function SsoButton({ sso, returnPath }: { sso: Sso; returnPath: string }) {
  if (sso.unavailable) {
    return (
      <div class="sso" data-testid="sso">
        <button type="button" class="btn" disabled>
          {sso.label}
        </button>
        <p class="error" role="status" data-testid="sso-unavailable">
          Single sign-on is unavailable: {sso.unavailable}
        </p>
      </div>
    );
  }
  return (
    <div class="sso" data-testid="sso">
      <a class="btn primary sso-button" href={ssoHref(returnPath)}>
        {sso.label}
      </a>
    </div>
  );
}

/**
 * The session ended (an API call answered 401): log in again without leaving the page. A local
 * account logs in here and the page carries on; SSO goes through the provider and back to this
 * very URL (its query holds the page's filters and the open resource).
 */
export function SessionExpired({ onLoggedIn, onClose }: { onLoggedIn: () => void; onClose: () => void }) {
  const sso = useSso();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const here = location.pathname + location.search + location.hash;
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await login(username, password);
      onLoggedIn();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title="Your session has ended" onClose={onClose}>
      <form class="relogin" onSubmit={submit} data-testid="relogin">
        <p class="muted">Log in again to carry on where you were; this page stays as it is.</p>
        {sso && <SsoButton sso={sso} returnPath={here} />}
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
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
    </Modal>
  );
}
