// ApplicationSets: the list (conditions, generated count) and one set's page (its generated
// Applications with sync and health, its conditions, and the deletions the brake holds with a
// Confirm button that writes plumb.dev/confirm-deletion through the server, and its Kubernetes
// Events, newest first).
import { useEffect, useState } from 'preact/hooks';
import { get, request, type Json } from './api';
import { Modal } from './modal';
import { eventTime, newestFirst } from './resource';
import { HealthLabel, SyncLabel, Time } from './status';

const enc = encodeURIComponent;

/** A list or object from the API, reloaded on demand. */
function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then((d) => live && (setData(d), setError('')))
      .catch((e) => live && setError((e as Error).message));
    return () => {
      live = false;
    };
  }, [n, ...deps]);
  return { data, error, reload: () => setN((x) => x + 1) };
}

const project = (s: Json): string => s.spec?.template?.spec?.project || 'default';
const trueConditions = (s: Json): Json[] => (s.status?.conditions || []).filter((c: Json) => c.status === 'True');
const generatedCount = (s: Json): number => s.status?.resourcesCount ?? s.status?.resources?.length ?? 0;
const setPath = (s: Json) => `/applicationsets/${enc(s.metadata.namespace || '')}/${enc(s.metadata.name)}`;

function Conditions({ conditions }: { conditions: Json[] }) {
  if (!conditions.length) return <span class="muted">none</span>;
  return (
    <ul class="plain">
      {conditions.map((c) => (
        <li key={c.type} data-condition={c.type}>
          <strong class={c.type === 'DeletionHeld' || c.type === 'ErrorOccurred' ? 'c-degraded' : undefined}>{c.type}</strong>
          {c.message ? <span class="muted"> {c.message}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function AppSetsPage() {
  const { data, error, reload } = useLoad(() => get('/api/v1/applicationsets'), []);
  const items: Json[] = data?.items || [];
  return (
    <div class="page">
      <header class="page-head">
        <h1>ApplicationSets</h1>
        <div class="toolbar">
          <button type="button" class="btn" onClick={reload}>
            Refresh
          </button>
        </div>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!data && !error && <p class="muted">Loading…</p>}
      {data && !items.length && <p class="muted">No ApplicationSets.</p>}
      {items.length > 0 && (
        <table class="table" data-testid="appsets">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Project</th>
              <th scope="col">Applications</th>
              <th scope="col">Conditions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <tr key={`${s.metadata.namespace}/${s.metadata.name}`} data-appset={s.metadata.name}>
                <td>
                  <a href={setPath(s)}>{s.metadata.name}</a>
                  <div class="muted">{s.metadata.namespace}</div>
                </td>
                <td>{project(s)}</td>
                <td data-field="generated">{generatedCount(s)}</td>
                <td>
                  <Conditions conditions={trueConditions(s)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function ConfirmDeletion({ set, apps, onClose, onDone }: { set: Json; apps: string[]; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const all = apps.length === 0;
  return (
    <Modal title="Confirm deletion" onClose={onClose}>
      <form
        class="confirm"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            const body = all ? { all: true } : { applications: apps };
            await request('POST', `/api/v1/applicationsets/${enc(set.metadata.name)}/confirm-deletion?appsetNamespace=${enc(set.metadata.namespace || '')}`, {
              ...body,
              appsetNamespace: set.metadata.namespace,
            });
            onDone();
            onClose();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>
          {all ? 'Every Application the brake holds' : apps.join(', ')} will be deleted by the controller, with the resources it deployed unless the set preserves
          them.
        </p>
        {error && (
          <p class="error pre" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn danger" disabled={busy}>
            Delete {all ? 'all' : apps.length === 1 ? apps[0] : `${apps.length} Applications`}
          </button>
        </div>
      </form>
    </Modal>
  );
}

export function AppSetPage({ namespace, name }: { namespace: string; name: string }) {
  const q = namespace ? `?appsetNamespace=${enc(namespace)}` : '';
  const set = useLoad(() => get(`/api/v1/applicationsets/${enc(name)}${q}`), [namespace, name]);
  const owned = useLoad(() => get(`/api/v1/applicationsets/${enc(name)}/applications${q}`), [namespace, name]);
  const events = useLoad(() => get(`/api/v1/applicationsets/${enc(name)}/events${q}`), [namespace, name]);
  const [confirming, setConfirming] = useState<string[] | null>(null);
  const reload = () => {
    set.reload();
    owned.reload();
    events.reload();
  };
  const s = set.data;
  const apps: Json[] = owned.data?.items || [];
  const pending: string[] = owned.data?.pendingDeletions || [];
  return (
    <div class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/applicationsets">ApplicationSets</a> / <span>{name}</span>
      </nav>
      <header class="page-head">
        <h1>{name}</h1>
        <div class="toolbar">
          <button type="button" class="btn" onClick={reload}>
            Refresh
          </button>
        </div>
      </header>
      {(set.error || owned.error) && (
        <p class="error" role="alert">
          {set.error || owned.error}
        </p>
      )}
      {s && (
        <dl class="fields">
          <dt>Project</dt>
          <dd>{project(s)}</dd>
          <dt>Namespace</dt>
          <dd>{s.metadata.namespace}</dd>
          <dt>Generated</dt>
          <dd data-field="generated">{generatedCount(s)}</dd>
        </dl>
      )}
      {pending.length > 0 && (
        <section class="brake" data-testid="pending-deletions" aria-labelledby="pending-h">
          <h2 id="pending-h">Deletions held by the brake</h2>
          <p class="muted">The generators stopped producing these Applications; they are kept until you confirm.</p>
          <ul class="plain">
            {pending.map((a) => (
              <li key={a} data-pending={a}>
                <code>{a}</code>{' '}
                <button type="button" class="btn danger" onClick={() => setConfirming([a])}>
                  Confirm deletion of {a}
                </button>
              </li>
            ))}
          </ul>
          <button type="button" class="btn danger" onClick={() => setConfirming([])}>
            Confirm all
          </button>
        </section>
      )}
      {s && (
        <section aria-labelledby="cond-h">
          <h2 id="cond-h">Conditions</h2>
          <table class="table" data-testid="conditions">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {(s.status?.conditions || []).map((c: Json) => (
                <tr key={c.type} data-condition={c.type}>
                  <td>{c.type}</td>
                  <td>{c.status}</td>
                  <td>{c.reason}</td>
                  <td>{c.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <section aria-labelledby="apps-h">
        <h2 id="apps-h">Applications</h2>
        {owned.data && !apps.length && <p class="muted">No Applications.</p>}
        {apps.length > 0 && (
          <table class="table" data-testid="generated">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Sync</th>
                <th scope="col">Health</th>
              </tr>
            </thead>
            <tbody>
              {apps.map((a) => (
                <tr key={a.metadata.name} data-app={a.metadata.name}>
                  <td>
                    <a href={`/applications/${enc(a.metadata.namespace || '')}/${enc(a.metadata.name)}`}>{a.metadata.name}</a>
                  </td>
                  <td>
                    <SyncLabel status={a.status?.sync?.status} />
                  </td>
                  <td>
                    <HealthLabel status={a.status?.health?.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="events-h">
        <h2 id="events-h">Events</h2>
        {events.error ? (
          <p class="error" role="alert">
            Events could not be read: {events.error}
          </p>
        ) : events.data === null ? (
          <p class="muted">Loading…</p>
        ) : !(events.data?.items || []).length ? (
          <p class="muted">No events.</p>
        ) : (
          <table class="table" data-testid="events">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {newestFirst(events.data.items).map((e: Json, i: number) => (
                <tr key={i} data-event={e.reason}>
                  <td>{e.type}</td>
                  <td>{e.reason}</td>
                  <td>{e.message}</td>
                  <td>
                    <Time t={eventTime(e) || undefined} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {confirming && s && <ConfirmDeletion set={s} apps={confirming} onClose={() => setConfirming(null)} onDone={reload} />}
    </div>
  );
}
