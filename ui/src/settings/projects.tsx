// Projects (Argo's /settings/projects): every project with its lists, create and delete; a
// project's page (project.tsx) edits them. An unset list and an empty one are told apart where
// Argo treats them differently.
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { navigate } from '../router';
import { Confirm, enc, FormDialog, SettingsPage, Text, useForm, useLoad } from './form';
import { describe, LISTS, readList, type ListDef } from './lists';

/** One list of a project, read only: its rows, or what its absence (or emptiness) means. */
export function ListView({ def, spec }: { def: ListDef; spec: Json }) {
  const rows = readList(spec, def);
  return (
    <>
      <dt>{def.label}</dt>
      <dd data-field={def.label}>
        {rows && rows.length ? (
          <ul class="plain">
            {rows.map((x, i) => (
              <li key={i}>
                <code>{describe(def, x)}</code>
              </li>
            ))}
          </ul>
        ) : (
          <span class="muted">{rows == null ? def.unset : (def.empty ?? def.unset)}</span>
        )}
      </dd>
    </>
  );
}

export const windowText = (w: Json) =>
  `${w.kind} ${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ''}${w.applications ? ` apps ${w.applications.join(',')}` : ''}${
    w.namespaces ? ` namespaces ${w.namespaces.join(',')}` : ''
  }${w.clusters ? ` clusters ${w.clusters.join(',')}` : ''}${w.manualSync ? ' (manual sync allowed)' : ''}`;

/** A project name as Kubernetes takes it (an RFC 1123 subdomain). */
export const validName = (n: string) => (!n ? 'A project name is required.' : /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(n) ? '' : 'Lower-case letters, digits, "-" and ".", starting and ending with a letter or digit.');

function NewProject({ onClose }: { onClose: () => void }) {
  const form = useForm({ name: '', description: '' });
  return (
    <FormDialog
      title="New project"
      form={form}
      onClose={onClose}
      submitLabel="Create"
      testid="project-form"
      onSubmit={() =>
        form.submit(
          (v) => ({ name: validName(v.name.trim()) }),
          async (v) => {
            const spec: Json = v.description.trim() ? { description: v.description.trim() } : {};
            await request('POST', '/api/v1/projects', { project: { metadata: { name: v.name.trim() }, spec } });
            navigate(`/settings/projects/${enc(v.name.trim())}`);
          },
          [['name', /name|exists|appprojects/i]],
        )
      }
    >
      <Text form={form} name="name" label="Project name" />
      <Text form={form} name="description" label="Description (optional)" />
    </FormDialog>
  );
}

export function ProjectsPage() {
  const projects = useLoad(() => request('GET', '/api/v1/projects').then((r) => r?.items || []));
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<string>('');
  const items: Json[] = [...(projects.data || [])].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return (
    <SettingsPage
      title="Projects"
      error={projects.error}
      loading={projects.data === null}
      actions={
        <button type="button" class="btn primary" onClick={() => setCreating(true)}>
          New project
        </button>
      }
    >
      {projects.data?.length === 0 && <p class="muted">No projects you may read.</p>}
      <div class="projects">
        {items.map((p) => {
          const s = p.spec || {};
          const n = p.metadata.name;
          return (
            <section class="card project" key={n} aria-labelledby={`proj-${n}`} data-testid="project">
              <header class="page-head">
                <h2 id={`proj-${n}`}>
                  <a href={`/settings/projects/${enc(n)}`}>{n}</a>
                </h2>
                <button type="button" class="btn danger" aria-label={`Delete project ${n}`} onClick={() => setDeleting(n)}>
                  Delete
                </button>
              </header>
              {s.description && <p class="muted">{s.description}</p>}
              <dl class="fields">
                {LISTS.map((d) => (
                  <ListView key={d.field} def={d} spec={s} />
                ))}
                <dt>Sync windows</dt>
                <dd data-field="Sync windows">{s.syncWindows?.length ? s.syncWindows.map((w: Json, i: number) => <code key={i}>{windowText(w)}</code>) : <span class="muted">none</span>}</dd>
                <dt>Roles</dt>
                <dd data-field="Roles">{(s.roles || []).map((r: Json) => r.name).join(', ') || <span class="muted">none</span>}</dd>
              </dl>
            </section>
          );
        })}
      </div>
      {creating && <NewProject onClose={() => setCreating(false)} />}
      {deleting && (
        <Confirm
          title="Delete the project"
          body={
            <p>
              Delete project <code>{deleting}</code>? The server refuses while Applications use it.
            </p>
          }
          action="Delete"
          onClose={() => setDeleting('')}
          onConfirm={async () => {
            await request('DELETE', `/api/v1/projects/${enc(deleting)}`);
            projects.reload();
          }}
        />
      )}
    </SettingsPage>
  );
}
