// A small history router over Argo CD's page paths; links are real <a href> so they open in new
// tabs and work from the keyboard.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'login'; returnUrl: string }
  | { page: 'apps' }
  | { page: 'app'; namespace: string; name: string; resource?: string; tab?: string }
  | { page: 'settings'; section: string; name?: string }
  | { page: 'appsets' }
  | { page: 'appset'; namespace: string; name: string }
  | { page: 'notfound'; path: string };

export function parse(loc: { pathname: string; search: string }): Route {
  const parts = loc.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const q = new URLSearchParams(loc.search);
  if (parts.length === 0) return { page: 'apps' };
  if (parts[0] === 'login') return { page: 'login', returnUrl: q.get('return_url') || '/applications' };
  if (parts[0] === 'applications') {
    if (parts.length === 1) return { page: 'apps' };
    // Argo's paths: /applications/<namespace>/<name>, and the older /applications/<name>.
    const [namespace, name] = parts.length >= 3 ? [parts[1], parts[2]] : ['', parts[1]];
    return { page: 'app', namespace, name, resource: q.get('resource') || undefined, tab: q.get('tab') || undefined };
  }
  // Plumb's: /applicationsets, /applicationsets/<namespace>/<name> (or /<name>).
  if (parts[0] === 'applicationsets') {
    if (parts.length === 1) return { page: 'appsets' };
    const [namespace, name] = parts.length >= 3 ? [parts[1], parts[2]] : ['', parts[1]];
    return { page: 'appset', namespace, name };
  }
  // Argo's settings paths: /settings, /settings/<section>, /settings/<section>/<name>.
  if (parts[0] === 'settings') return { page: 'settings', section: parts[1] || '', name: parts[2] };
  if (parts[0] === 'user-info') return { page: 'settings', section: 'user-info' };
  return { page: 'notfound', path: loc.pathname };
}

export function navigate(url: string, replace = false) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location));
  useEffect(() => {
    const on = () => setRoute(parse(location));
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return route;
}

/** In-app navigation for plain left clicks on internal links; other clicks stay the browser's. */
export function onLinkClick(e: MouseEvent) {
  const a = (e.target as HTMLElement).closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href');
  // /api/ and /auth/ (the SSO login round trip) are the server's, not pages of this app.
  if (!href || !href.startsWith('/') || href.startsWith('/api/') || href.startsWith('/auth/') || a.target) return;
  e.preventDefault();
  navigate(href);
}
