// Sync and health icons with Argo CD's colours and shapes, so its users read them at a glance:
// Healthy green heart, Progressing blue spinner, Degraded red broken heart, Suspended purple
// pause, Missing yellow ghost, Synced green check, OutOfSync yellow arrow.
import type { JSX } from 'preact';

export const HEALTH = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'] as const;
export const SYNC = ['Synced', 'OutOfSync', 'Unknown'] as const;

const paths: Record<string, JSX.Element> = {
  heart: <path d="M8 14.5 1.9 8.6A3.7 3.7 0 0 1 8 3.6a3.7 3.7 0 0 1 6.1 5L8 14.5z" />,
  broken: (
    <path d="M8 14.5 1.9 8.6A3.7 3.7 0 0 1 7.2 3.2L6.2 6.6l2.6 1.6-1.4 3.1 3-3.7L7.9 6l1-2.6a3.7 3.7 0 0 1 5.2 5.2L8 14.5z" />
  ),
  check: <path d="M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zm-1.2 10.2L3.6 8l1.2-1.2 2 2 4.4-4.4 1.2 1.2-5.6 5.6z" />,
  up: <path d="M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zm0 3.2 3.8 3.9H9.4V12H6.6V8.1H4.2L8 4.2z" />,
  question: (
    <path d="M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zm.1 11.4a1 1 0 1 1 0-2 1 1 0 0 1 0 2zm1.3-4.3c-.6.4-.7.6-.7 1.1H7.3c0-1 .3-1.5 1-2 .6-.4.8-.6.8-1a.9.9 0 0 0-1-.9c-.6 0-1 .4-1 1H5.6A2.5 2.5 0 0 1 8.2 3.9c1.5 0 2.5.8 2.5 2.1 0 .9-.5 1.5-1.3 2.1z" />
  ),
  pause: <path d="M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zM6.8 11H5.2V5h1.6v6zm4 0H9.2V5h1.6v6z" />,
  ghost: <path d="M8 1.5A5 5 0 0 0 3 6.5v8l1.7-1.3 1.6 1.3L8 13.2l1.7 1.3 1.6-1.3 1.7 1.3v-8a5 5 0 0 0-5-5zM6.2 7.6a1.1 1.1 0 1 1 0-2.2 1.1 1.1 0 0 1 0 2.2zm3.6 0a1.1 1.1 0 1 1 0-2.2 1.1 1.1 0 0 1 0 2.2z" />,
  spinner: (
    <path d="M8 1.5a6.5 6.5 0 1 0 6.5 6.5h-1.8A4.7 4.7 0 1 1 8 3.3V1.5z" />
  ),
  cross: <path d="M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zm3.3 9.1-1.2 1.2L8 9.2l-2.1 2.1-1.2-1.2L6.8 8 4.7 5.9l1.2-1.2L8 6.8l2.1-2.1 1.2 1.2L9.2 8l2.1 2.1z" />,
};

const healthShape: Record<string, [string, string]> = {
  Healthy: ['heart', 'c-healthy'],
  Progressing: ['spinner', 'c-progressing spin'],
  Degraded: ['broken', 'c-degraded'],
  Suspended: ['pause', 'c-suspended'],
  Missing: ['ghost', 'c-missing'],
  Unknown: ['question', 'c-unknown'],
};

const syncShape: Record<string, [string, string]> = {
  Synced: ['check', 'c-healthy'],
  OutOfSync: ['up', 'c-outofsync'],
  Unknown: ['question', 'c-unknown'],
};

const phaseShape: Record<string, [string, string]> = {
  Running: ['spinner', 'c-progressing spin'],
  Terminating: ['spinner', 'c-progressing spin'],
  Succeeded: ['check', 'c-healthy'],
  Failed: ['cross', 'c-degraded'],
  Error: ['cross', 'c-degraded'],
};

function Icon({ shape, cls, title }: { shape: string; cls: string; title: string }) {
  return (
    <svg class={`icon ${cls}`} viewBox="0 0 16 16" width="16" height="16" role="img" aria-label={title}>
      <title>{title}</title>
      <g fill="currentColor">{paths[shape]}</g>
    </svg>
  );
}

export function HealthIcon({ status }: { status?: string }) {
  const s = status || 'Unknown';
  const [shape, cls] = healthShape[s] ?? healthShape.Unknown;
  return <Icon shape={shape} cls={cls} title={`Health: ${s}`} />;
}

export function SyncIcon({ status }: { status?: string }) {
  const s = status || 'Unknown';
  const [shape, cls] = syncShape[s] ?? syncShape.Unknown;
  return <Icon shape={shape} cls={cls} title={`Sync: ${s}`} />;
}

export function PhaseIcon({ phase }: { phase?: string }) {
  const p = phase || 'Unknown';
  const [shape, cls] = phaseShape[p] ?? ['question', 'c-unknown'];
  return <Icon shape={shape} cls={cls} title={`Operation: ${p}`} />;
}

export function HealthLabel({ status }: { status?: string }) {
  return (
    <span class="status" data-health={status || 'Unknown'}>
      <HealthIcon status={status} /> {status || 'Unknown'}
    </span>
  );
}

export function SyncLabel({ status }: { status?: string }) {
  return (
    <span class="status" data-sync={status || 'Unknown'}>
      <SyncIcon status={status} /> {status || 'Unknown'}
    </span>
  );
}

/** "3 minutes ago" from an RFC 3339 time; the exact time goes in a title. */
export function ago(t?: string): string {
  if (!t) return '';
  const ms = Date.now() - Date.parse(t);
  if (Number.isNaN(ms)) return t;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h ago`;
  return `${Math.round(h / 24)}d ago`;
}

export function Time({ t }: { t?: string }) {
  if (!t) return <span class="muted">never</span>;
  return (
    <time dateTime={t} title={t}>
      {ago(t)}
    </time>
  );
}

/** One object's result in `status.operationState.syncResult.resources`. */
export interface ResourceResult {
  group?: string;
  kind: string;
  namespace?: string;
  name: string;
  status?: string;
  message?: string;
  hookPhase?: string;
}

/** The objects of a sync result that failed: a refused apply, a failed prune, a failed hook. */
export const failedResults = (op: { syncResult?: { resources?: ResourceResult[] | null } } | null | undefined): ResourceResult[] =>
  (op?.syncResult?.resources || []).filter((r) => r.status === 'SyncFailed' || r.hookPhase === 'Failed' || r.hookPhase === 'Error');

/**
 * Why a sync failed, object by object, with the API server's or the hook's message ("one or
 * more objects failed to apply" alone says nothing). Each object opens its panel when
 * `onSelect` is given.
 */
export function FailedResults({ results, onSelect }: { results: ResourceResult[]; onSelect?: (r: ResourceResult) => void }) {
  if (!results.length) return null;
  return (
    <ul class="plain failed-results" data-testid="failed-results" aria-label="Objects that failed">
      {results.map((r, i) => (
        <li key={i}>
          <PhaseIcon phase="Failed" />{' '}
          {onSelect ? (
            <button type="button" class="btn link" onClick={() => onSelect(r)}>
              {r.kind} {r.name}
            </button>
          ) : (
            <strong>
              {r.kind} {r.name}
            </strong>
          )}
          : <span class="error">{r.message || r.hookPhase || r.status}</span>
        </li>
      ))}
    </ul>
  );
}
