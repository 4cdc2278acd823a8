// A project's sync windows: when syncs are allowed or denied (a cron schedule and a duration),
// for which applications, namespaces and clusters.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { Check, Confirm, enc, FormDialog, Select, splitList, Text, useForm, useLoad, type Errors } from './form';
import type { SaveSpec } from './project';
import { windowText } from './projects';

/** A Go duration as Argo parses a window's: `1h`, `30m`, `1h30m`. */
const DURATION = /^(\d+(\.\d+)?(h|m|s|ms))+$/;

export function checkWindow(v: Json): Errors {
  const fields = v.schedule.trim().split(/\s+/);
  return {
    schedule: fields.length === 5 || /^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(v.schedule.trim()) ? '' : 'A cron schedule of five fields, such as "0 22 * * *".',
    duration: DURATION.test(v.duration.trim()) ? '' : 'A duration such as 1h, 30m or 1h30m.',
    applications: v.applications || v.namespaces || v.clusters ? '' : 'A window applies to some applications, namespaces or clusters (* for all).',
  };
}

function WindowForm({ index, spec, save, onClose }: { index: number | null; spec: Json; save: SaveSpec; onClose: () => void }) {
  const w = index === null ? {} : spec.syncWindows[index];
  const form = useForm({
    kind: w.kind || 'allow',
    schedule: w.schedule || '',
    duration: w.duration || '',
    timeZone: w.timeZone || '',
    applications: (w.applications || []).join(', '),
    namespaces: (w.namespaces || []).join(', '),
    clusters: (w.clusters || []).join(', '),
    manualSync: !!w.manualSync,
    andOperator: !!w.andOperator,
    description: w.description || '',
  });
  return (
    <FormDialog
      title={index === null ? 'New sync window' : 'Edit the sync window'}
      form={form}
      onClose={onClose}
      submitLabel="Save"
      wide
      testid="window-form"
      onSubmit={() =>
        form.submit(
          checkWindow,
          async (v) => {
            const next: Json = { ...w, kind: v.kind, schedule: v.schedule.trim(), duration: v.duration.trim() };
            for (const k of ['applications', 'namespaces', 'clusters'] as const) {
              const l = splitList(v[k]);
              if (l.length) next[k] = l;
              else delete next[k];
            }
            for (const k of ['timeZone', 'description'] as const) {
              if (v[k].trim()) next[k] = v[k].trim();
              else delete next[k];
            }
            next.manualSync = v.manualSync || undefined;
            next.andOperator = v.andOperator || undefined;
            const all: Json[] = [...(spec.syncWindows || [])];
            if (index === null) all.push(next);
            else all[index] = next;
            await save({ ...spec, syncWindows: all });
            onClose();
          },
          [
            ['schedule', /schedule|cron/i],
            ['duration', /duration/i],
            ['timeZone', /time ?zone|location/i],
            ['kind', /kind/i],
          ],
        )
      }
    >
      <div class="form-grid">
        <Select form={form} name="kind" label="Kind" options={['allow', 'deny']} />
        <Text form={form} name="schedule" label="Schedule (cron)" placeholder="0 22 * * *" />
        <Text form={form} name="duration" label="Duration" placeholder="1h" />
        <Text form={form} name="timeZone" label="Time zone (optional)" placeholder="Europe/Paris" />
        <Text form={form} name="applications" label="Applications (comma-separated)" placeholder="*" />
        <Text form={form} name="namespaces" label="Namespaces (comma-separated)" />
        <Text form={form} name="clusters" label="Clusters (comma-separated)" />
        <Text form={form} name="description" label="Description (optional)" />
      </div>
      <Check form={form} name="manualSync" label="Allow manual syncs during the window" />
      <Check form={form} name="andOperator" label="Match applications AND namespaces AND clusters (instead of OR)" />
    </FormDialog>
  );
}

export function SyncWindows({ name, spec, save }: { name: string; spec: Json; save: SaveSpec }) {
  const windows: Json[] = spec.syncWindows || [];
  // The windows open now (Argo's GetSyncWindowsState), told apart by their text; loaded again
  // whenever the windows change.
  const state = useLoad(() => request('GET', `/api/v1/projects/${enc(name)}/syncwindows`), [name, JSON.stringify(windows)]);
  const active = new Set((state.data?.windows || []).map(windowText));
  const [editing, setEditing] = useState<number | 'new' | null>(null);
  const [deleting, setDeleting] = useState<number | null>(null);
  return (
    <section class="card" data-testid="sync-windows">
      <header class="page-head">
        <h2>Sync windows</h2>
        <button type="button" class="btn" onClick={() => setEditing('new')}>
          Add sync window
        </button>
      </header>
      {!windows.length && <p class="muted">No sync window: syncs are allowed at any time.</p>}
      <ul class="plain">
        {windows.map((w, i) => (
          <li key={i} class="window" data-window={i}>
            <code>{windowText(w)}</code> {active.has(windowText(w)) && <span class="tag" data-testid="window-active">active now</span>}{' '}
            <button type="button" class="btn" aria-label={`Edit sync window ${i + 1}`} onClick={() => setEditing(i)}>
              Edit
            </button>{' '}
            <button type="button" class="btn danger" aria-label={`Delete sync window ${i + 1}`} onClick={() => setDeleting(i)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      {editing !== null && <WindowForm index={editing === 'new' ? null : editing} spec={spec} save={save} onClose={() => setEditing(null)} />}
      {deleting !== null && (
        <Confirm
          title="Delete the sync window"
          body={<p>Delete the window {windowText(windows[deleting])}?</p>}
          action="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={() => save({ ...spec, syncWindows: windows.filter((_, j) => j !== deleting) })}
        />
      )}
    </section>
  );
}
