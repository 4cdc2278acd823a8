// The Logs tab of the resource panel: Argo's `GET /api/v1/applications/{name}/logs` for a Pod
// (`podName`) or for the Pods below a workload (`kind`, `group`, `resourceName`), the last lines
// (`tailLines`), one container or the Pod's default. Lines are text (never markup); errors are
// said, never shown as an empty log.
import { useEffect, useState } from 'preact/hooks';
import { appPath, type Json } from './api';
import type { TreeItem } from './tree';

/** Kinds whose logs are those of the Pods below them (Argo's logs viewer offers these). */
const WORKLOADS = new Set(['Pod', 'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Rollout']);

export const hasLogs = (item: TreeItem): boolean => !item.root && WORKLOADS.has(item.kind);

/** At most this many lines per request: the page keeps no more. */
const TAIL = 1000;

interface LogLine {
  pod: string;
  time: string;
  text: string;
}

/** Argo's gateway frames, one `{"result": LogEntry}` or `{"error": ...}` per line. */
export function parseFrames(text: string): { lines: LogLine[]; error: string } {
  const lines: LogLine[] = [];
  let error = '';
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let f: Json;
    try {
      f = JSON.parse(raw);
    } catch {
      error = `an unreadable answer line: ${raw.slice(0, 200)}`;
      continue;
    }
    if (f?.error) error = String(f.error.message || f.error);
    const r = f?.result;
    if (!r || r.last) continue;
    lines.push({ pod: String(r.podName || ''), time: String(r.timeStampStr || r.timeStamp || ''), text: String(r.content ?? '') });
  }
  return { lines: lines.slice(-TAIL), error };
}

function logsQuery(item: TreeItem, container: string): Record<string, string> {
  const q: Record<string, string> = { tailLines: String(TAIL), namespace: item.namespace || '' };
  if (item.kind === 'Pod') q.podName = item.name;
  else Object.assign(q, { kind: item.kind, group: item.group || '', resourceName: item.name });
  if (container) q.container = container;
  return q;
}

export function LogsView({ app, ns, item }: { app: string; ns: string; item: TreeItem }) {
  const [container, setContainer] = useState('');
  const [typed, setTyped] = useState('');
  const [state, setState] = useState<{ lines: LogLine[]; error: string } | null>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let gone = false;
    setState(null);
    fetch(appPath(app, ns, '/logs', logsQuery(item, container)), { credentials: 'same-origin' })
      .then(async (r) => {
        const text = await r.text();
        if (!r.ok) {
          let msg = `${r.status} ${r.statusText}`;
          try {
            const body = JSON.parse(text);
            msg = body.message || body.error || msg;
          } catch {
            /* the status line says it */
          }
          return { lines: [], error: msg };
        }
        return parseFrames(text);
      })
      .catch((e) => ({ lines: [], error: (e as Error).message }))
      .then((s) => !gone && setState(s));
    return () => {
      gone = true;
    };
  }, [item.id, container, reload]);

  const many = new Set(state?.lines.map((l) => l.pod)).size > 1;
  return (
    <div class="logs" data-testid="logs">
      <form
        class="logs-bar"
        onSubmit={(e) => {
          e.preventDefault();
          setContainer(typed.trim());
          setReload(reload + 1);
        }}
      >
        <label>
          Container
          <input value={typed} placeholder="the Pod's default" onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <button type="submit" class="btn">
          Reload
        </button>
        <span class="muted">the last {TAIL} lines</span>
      </form>
      {state === null ? (
        <p class="muted">Loading…</p>
      ) : state.error ? (
        <p class="error" role="alert">
          Logs could not be read: {state.error}
        </p>
      ) : state.lines.length === 0 ? (
        <p class="muted">No log lines.</p>
      ) : (
        <pre class="manifest log-lines" aria-label="Log lines">
          {state.lines.map((l, i) => (
            <div key={i}>
              {many && <span class="muted">{l.pod} </span>}
              {l.text}
            </div>
          ))}
        </pre>
      )}
    </div>
  );
}
