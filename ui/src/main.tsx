import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import { logout, setUnauthenticatedHandler, userInfo, type UserInfo } from './api';
import { navigate, onLinkClick, useRoute } from './router';
import { LoginPage } from './login';
import { AppsPage } from './apps';
import { AppDetailsPage } from './details';
import { ProjectsPage } from './projects';

type Theme = 'light' | 'dark';

function initialTheme(): Theme {
  const saved = localStorage.getItem('plumb.theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function Shell() {
  const route = useRoute();
  const [user, setUser] = useState<UserInfo | null>(null);
  const [theme, setTheme] = useState<Theme>(initialTheme);

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('plumb.theme', theme);
  }, [theme]);

  useEffect(() => {
    setUnauthenticatedHandler(() => {
      if (location.pathname !== '/login') {
        navigate(`/login?return_url=${encodeURIComponent(location.pathname + location.search)}`, true);
      }
    });
  }, []);

  useEffect(() => {
    if (route.page === 'login') return;
    userInfo()
      .then(setUser)
      .catch(() => setUser({ loggedIn: false }));
  }, [route.page]);

  useEffect(() => {
    const titles: Record<string, string> = { login: 'Log in', apps: 'Applications', projects: 'Projects', notfound: 'Not found' };
    document.title = `${route.page === 'app' ? route.name : titles[route.page]} · Plumb`;
  }, [route]);

  if (route.page === 'login') {
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
        <a href="/settings/projects" aria-current={route.page === 'projects' ? 'page' : undefined}>
          Projects
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
        {route.page === 'app' && <AppDetailsPage route={route} user={user} />}
        {route.page === 'projects' && <ProjectsPage />}
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
