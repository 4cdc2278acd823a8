// The REST API of plumb server (Argo CD's gateway paths and shapes). The session is the
// HTTP-only `argocd.token` cookie the server sets at login, so no token is kept in page scripts.

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Json = any;

export interface Application {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string; creationTimestamp?: string; annotations?: Record<string, string> };
  spec: Json;
  status?: Json;
  operation?: Json;
}

export interface ResourceNode {
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  parentRefs?: { group: string; kind: string; namespace: string; name: string; uid?: string }[];
  health?: { status: string; message?: string };
  images?: string[];
  createdAt?: string;
  /** Argo's info items (`Revision` = `Rev:N` for a ReplicaSet or Deployment). */
  info?: { name: string; value: string }[];
  resourceVersion?: string;
}

export interface ResourceDiff {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  targetState: string;
  liveState: string;
  normalizedLiveState?: string;
  predictedLiveState?: string;
  modified?: boolean;
  diff?: string;
  hook?: boolean;
}

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called on a 401 outside the login page: the session ended, log in again. */
let onUnauthenticated: () => void = () => {};
export function setUnauthenticatedHandler(f: () => void) {
  onUnauthenticated = f;
}

export async function request<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data: Json = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!resp.ok) {
    if (resp.status === 401 && !path.startsWith('/api/v1/session')) onUnauthenticated();
    const msg = (data && (data.message || data.error)) || `${resp.status} ${resp.statusText}`;
    throw new ApiError(resp.status, String(msg));
  }
  return data as T;
}

export const get = <T = Json>(path: string) => request<T>('GET', path);

/** `?appNamespace=` when the Application lives outside the control namespace (Argo's query). */
export function appPath(name: string, ns: string | undefined, suffix = '', query: Record<string, string> = {}): string {
  const q = new URLSearchParams(query);
  if (ns) q.set('appNamespace', ns);
  const qs = q.toString();
  return `/api/v1/applications/${encodeURIComponent(name)}${suffix}${qs ? `?${qs}` : ''}`;
}

export interface UserInfo {
  loggedIn: boolean;
  username?: string;
  iss?: string;
  groups?: string[];
}

export const userInfo = () => get<UserInfo>('/api/v1/session/userinfo');
// The settings answer depends on the session (the control namespace and resource overrides are
// given to logged-in callers only), so a login or logout forgets the one fetched before it.
export const login = (username: string, password: string) => {
  settingsPromise = null;
  return request('POST', '/api/v1/session', { username, password });
};
export const logout = () => {
  settingsPromise = null;
  return request('DELETE', '/api/v1/session');
};

/** Argo's `AccountService.CanI`: what RBAC lets the caller do (`yes`/`no`). */
export async function canI(resource: string, action: string, object: string): Promise<boolean> {
  try {
    const r = await get<{ value: string }>(
      `/api/v1/account/can-i/${encodeURIComponent(resource)}/${encodeURIComponent(action)}/${object
        .split('/')
        .map(encodeURIComponent)
        .join('/')}`,
    );
    return r.value === 'yes';
  } catch {
    return false;
  }
}

/**
 * The watch stream of Applications as server-sent events; `onEvent` gets each ADDED, MODIFIED
 * and DELETED event. The browser reconnects on its own after a dropped connection; the server
 * sends the current Applications again as ADDED then.
 */
export function watchApplications(
  query: Record<string, string>,
  onEvent: (type: string, app: Application) => void,
  onState?: (connected: boolean) => void,
): () => void {
  const qs = new URLSearchParams(query).toString();
  const es = new EventSource(`/api/v1/stream/applications${qs ? `?${qs}` : ''}`);
  es.onopen = () => onState?.(true);
  es.onerror = () => onState?.(false);
  es.onmessage = (m) => {
    try {
      const ev = JSON.parse(m.data);
      const r = ev.result ?? ev;
      if (r && r.application) onEvent(r.type, r.application);
    } catch {
      /* a malformed frame is skipped; the next one carries the full object again */
    }
  };
  return () => es.close();
}

let settingsPromise: Promise<Json> | null = null;
/** `GET /api/v1/settings` (public), fetched once per page load. */
export function settings(): Promise<Json> {
  settingsPromise ??= get('/api/v1/settings').catch(() => ({}));
  return settingsPromise;
}

/** The RBAC object of an Application, as Argo writes it: `project/name` in the control
 * namespace, `project/namespace/name` elsewhere. */
export function rbacObject(projectName: string, appNs: string, name: string, controlNs: string): string {
  return appNs && controlNs && appNs !== controlNs ? `${projectName}/${appNs}/${name}` : `${projectName}/${name}`;
}

/** Argo's `RevisionMetadata` of a commit: author, date, tags, message. */
export interface RevisionMetadata {
  author?: string;
  date?: string;
  tags?: string[];
  message?: string;
  signatureInfo?: string;
}

// One request per Application and revision per page load: commits do not change.
const revisionCache = new Map<string, Promise<RevisionMetadata | null>>();
/** `GET .../revisions/{rev}/metadata`; null when the server cannot tell (a Helm chart version,
 * an unreachable repository). */
export function revisionMetadata(app: string, ns: string | undefined, revision: string, sourceIndex = 0): Promise<RevisionMetadata | null> {
  const k = `${ns || ''}/${app}/${sourceIndex}/${revision}`;
  let p = revisionCache.get(k);
  if (!p) {
    const q: Record<string, string> = sourceIndex ? { sourceIndex: String(sourceIndex) } : {};
    p = get<RevisionMetadata>(appPath(app, ns, `/revisions/${encodeURIComponent(revision)}/metadata`, q)).catch(() => null);
    revisionCache.set(k, p);
  }
  return p;
}

/**
 * Argo's `WatchResourceTree` as server-sent events: `onTree` gets the whole tree first and again
 * whenever it changes. `onClosed` is called when the server refuses or ends the stream for good
 * (the browser reconnects by itself after a dropped connection).
 */
export function watchResourceTree(
  app: string,
  ns: string | undefined,
  onTree: (nodes: ResourceNode[]) => void,
  onClosed: () => void,
): () => void {
  const q = ns ? `?appNamespace=${encodeURIComponent(ns)}` : '';
  const es = new EventSource(`/api/v1/stream/applications/${encodeURIComponent(app)}/resource-tree${q}`);
  es.onmessage = (m) => {
    try {
      const ev = JSON.parse(m.data);
      const tree = ev.result ?? ev;
      onTree(tree?.nodes || []);
    } catch {
      /* a malformed frame is skipped; the next one carries the whole tree again */
    }
  };
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) onClosed();
  };
  return () => es.close();
}
