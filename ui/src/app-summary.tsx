// The Application's own panel, opened by its node in the tree (as Argo's app node opens the
// summary), and the focus rule of the side panels: opening one moves focus into it, closing it
// gives focus back to what opened it.
import { Fragment, type ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import type { Application } from './api';
import { destNamespace, project, source } from './apps';
import { HealthLabel, SyncLabel } from './status';

/** Focus into the side panel when `openId` names an open panel; back to the opener on close. */
export function usePanelFocus(openId: string | undefined) {
  const opener = useRef<HTMLElement | null>(null);
  useLayoutEffect(() => {
    if (!openId) return;
    const active = document.activeElement as HTMLElement | null;
    if (active && !active.closest('[data-testid=resource-panel]')) opener.current = active;
    const panel = document.querySelector<HTMLElement>('[data-testid=resource-panel]');
    panel?.querySelector<HTMLElement>('button, [tabindex]')?.focus();
  }, [openId]);
  useLayoutEffect(() => {
    if (openId || !opener.current) return;
    // The opener may have been drawn again (a tree update): find it by what it shows.
    const o = opener.current;
    opener.current = null;
    const again = o.isConnected
      ? o
      : document.querySelector<HTMLElement>(`[data-testid=tree-node][data-kind="${o.dataset.kind}"][data-name="${o.dataset.name}"]`);
    again?.focus();
  }, [openId]);
}

export function AppSummaryPanel({ app, onClose }: { app: Application; onClose: () => void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  const s = source(app);
  const dest = app.spec?.destination || {};
  const rows: [string, ComponentChildren][] = [
    ['Project', project(app)],
    ['Repository', s.repoURL],
    [s.chart ? 'Chart' : 'Path', s.chart || s.path || '.'],
    ['Target revision', s.targetRevision || 'HEAD'],
    ['Destination', dest.name || dest.server || ''],
    ['Namespace', destNamespace(app)],
    ['Sync status', <SyncLabel status={app.status?.sync?.status} />],
    ['Health', <HealthLabel status={app.status?.health?.status} />],
    ['Revision', <code>{app.status?.sync?.revision || ''}</code>],
    ['Sync policy', app.spec?.syncPolicy?.automated ? 'Automated' : 'Manual'],
  ];
  return (
    <aside class="panel" aria-labelledby="panel-title" data-testid="resource-panel">
      <header class="panel-head">
        <div>
          <div class="muted">Application</div>
          <h2 id="panel-title">{app.metadata.name}</h2>
        </div>
        <button type="button" class="btn ghost" aria-label="Close panel" onClick={onClose}>
          ✕
        </button>
      </header>
      <div class="panel-body" id="panel-body">
        <dl class="fields">
          {rows.map(([k, v]) => (
            <Fragment key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </Fragment>
          ))}
        </dl>
      </div>
    </aside>
  );
}
