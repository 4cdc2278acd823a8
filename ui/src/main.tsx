import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './style.css';
import { logout, setUnauthenticatedHandler, userInfo, type UserInfo } from './api';
import { navigate, onLinkClick, useRoute } from './router';
import { LoginPage } from './login';
import { SessionExpired } from './sso';
import { AppsPage } from './apps';
import { AppSetPage, AppSetsPage } from './appsets';
import type { AppDetailsPage as DetailsPageType } from './details';
import type { Settings as SettingsType } from './settings/index';

type Theme = 'light' | 'dark';

// The details page (dagre, jsdiff, the YAML printer) and the settings pages are chunks of their
// own, fetched when first shown: the Applications page, the one opened most, loads only what
// it needs. Both are fetched once the list is up, so opening an application does not wait.
type Pages = { AppDetailsPage: typeof DetailsPageType; Settings: typeof SettingsType };
let pagesPromise: Promise<Pages> | null = null;
const loadPages = () =>
  (pagesPromise ??= Promise.all([import('./details'), import('./settings/index')]).then(([d, s]) => ({ AppDetailsPage: d.AppDetailsPage, Settings: s.Settings })));

function usePages(wanted: boolean): Pages | null {
  const [pages, setPages] = useState<Pages | null>(null);
  useEffect(() => {
    if (pages) return;
    if (wanted) loadPages().then(setPages);
    else {
      // Idle prefetch after the first page is drawn.
      const t = window.setTimeout(() => loadPages().then(setPages), 1500);
      return () => clearTimeout(t);
    }
  }, [wanted]);
  return pages;
}

function initialTheme(): Theme {
  const saved = localStorage.getItem('plumb.theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function Shell() {
  const route = useRoute();
  const [user, setUser] = useState<UserInfo | null>(null);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const pages = usePages(route.page === 'app' || route.page === 'settings');

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('plumb.theme', theme);
  }, [theme]);

  // The session ended under a page that had one: a dialog over the page asks for a new login,
  // so the page keeps its state. Without a session before (the first load), the login page.
  const [expired, setExpired] = useState(false);
  const hadSession = useRef(false);
  hadSession.current = !!user?.loggedIn;
  const toLogin = () => navigate(`/login?return_url=${encodeURIComponent(location.pathname + location.search)}`, true);
  useEffect(() => {
    setUnauthenticatedHandler(() => {
      if (location.pathname === '/login') return;
      if (hadSession.current) setExpired(true);
      else toLogin();
    });
  }, []);
  const renewed = async () => {
    setExpired(false);
    const u = await userInfo().catch(() => null);
    if (u) setUser(u);
    // Pages listening for it fetch again (their streams ended with the session).
    window.dispatchEvent(new Event('plumb:session'));
  };

  useEffect(() => {
    if (route.page === 'login') return;
    // An answer that comes after the page changed (to the login page, say) is stale: dropped.
    let live = true;
    userInfo()
      .then((u) => {
        if (!live) return;
        setUser(u);
        // A page that asks the API nothing (the settings overview) still needs a session.
        if (!u.loggedIn && location.pathname !== '/login') {
          if (hadSession.current) setExpired(true);
          else toLogin();
        }
      })
      .catch(() => live && setUser({ loggedIn: false }));
    return () => {
      live = false;
    };
  }, [route.page]);

  useEffect(() => {
    const titles: Record<string, string> = { login: 'Log in', apps: 'Applications', appsets: 'ApplicationSets', settings: 'Settings', notfound: 'Not found' };
    const title = route.page === 'app' || route.page === 'appset' ? route.name : route.page === 'settings' && route.section ? `${route.name ? `${route.name} · ` : ''}${route.section}` : titles[route.page];
    document.title = `${title} · Plumb`;
  }, [route]);

  if (route.page === 'login') {
    if (expired) setExpired(false);
    return <LoginPage returnUrl={route.returnUrl} onLoggedIn={(u) => setUser(u)} />;
  }

  const doLogout = async () => {
    try {
      await logout();
    } finally {
      setUser(null);
      navigate('/login', true);
    }
  };

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav class="sidebar" aria-label="Main">
        <a class="brand" href="/applications" aria-label="Plumb: applications">
          <span class="brand-dot" aria-hidden="true" /> Plumb
        </a>
        <a href="/applications" aria-current={route.page === 'apps' || route.page === 'app' ? 'page' : undefined}>
          Applications
        </a>
        <a href="/applicationsets" aria-current={route.page === 'appsets' || route.page === 'appset' ? 'page' : undefined}>
          ApplicationSets
        </a>
        <a href="/settings" aria-current={route.page === 'settings' && route.section !== 'user-info' ? 'page' : undefined}>
          Settings
        </a>
        <a href="/user-info" aria-current={route.page === 'settings' && route.section === 'user-info' ? 'page' : undefined}>
          User info
        </a>
        <div class="sidebar-foot">
          <button
            type="button"
            class="btn ghost"
            aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
            onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
          >
            {theme === 'dark' ? '☀ Light' : '☾ Dark'}
          </button>
          {user?.loggedIn && (
            <div class="whoami" data-testid="whoami">
              <span class="muted">Logged in as</span> <strong>{user.username}</strong>
            </div>
          )}
          {user?.loggedIn && (
            <button type="button" class="btn ghost" onClick={doLogout}>
              Log out
            </button>
          )}
        </div>
      </nav>
      <main id="main" tabIndex={-1}>
        {route.page === 'apps' && <AppsPage />}
        {route.page === 'app' && (pages ? <pages.AppDetailsPage route={route} user={user} /> : <div class="page muted">Loading {route.name}…</div>)}
        {route.page === 'appsets' && <AppSetsPage />}
        {route.page === 'appset' && <AppSetPage namespace={route.namespace} name={route.name} />}
        {route.page === 'settings' && (pages ? <pages.Settings route={route} /> : <div class="page muted">Loading…</div>)}
        {expired && (
          <SessionExpired
            onLoggedIn={renewed}
            onClose={() => setExpired(false)}
          />
        )}
        {route.page === 'notfound' && (
          <div class="page">
            <h1>Not found</h1>
            <p>
              No page at <code>{route.path}</code>. <a href="/applications">Applications</a>
            </p>
          </div>
        )}
      </main>
    </div>
  );
}

const root = document.getElementById('app');
if (root) render(<Shell />, root);
