// One project's page (Argo's /settings/projects/<name>): each list with its editor, the roles
// with their policies, groups and tokens, the sync windows. Every change saves the whole
// project (`PUT /api/v1/projects/{name}` with its resourceVersion: a concurrent change is
// refused rather than overwritten).
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { enc, FormDialog, SettingsPage, Text, useForm, useLoad } from './form';
import { LISTS, ListEditor, readList, writeList, type ListDef } from './lists';
import { ListView } from './projects';
import { Roles } from './project-roles';
import { SyncWindows } from './project-windows';

/** Saves a new spec of the project; the answer is the saved project. */
export type SaveSpec = (spec: Json) => Promise<void>;

function Description({ spec, save, onClose }: { spec: Json; save: SaveSpec; onClose: () => void }) {
  const form = useForm({ description: spec.description || '' });
  return (
    <FormDialog
      title="Edit the description"
      form={form}
      onClose={onClose}
      submitLabel="Save"
      onSubmit={() => form.submit(() => ({}), (v) => save({ ...spec, description: v.description.trim() || undefined }), [['description', /description/i]])}
    >
      <Text form={form} name="description" label="Description" />
    </FormDialog>
  );
}

export function ProjectPage({ name }: { name: string }) {
  const loaded = useLoad(() => request('GET', `/api/v1/projects/${enc(name)}`), [name]);
  const [project, setProject] = useState<Json | null>(null);
  const [editing, setEditing] = useState<ListDef | 'description' | null>(null);
  const p = project && project.metadata?.name === name ? project : loaded.data;
  const spec = p?.spec || {};
  const save: SaveSpec = async (newSpec) => {
    const saved = await request('PUT', `/api/v1/projects/${enc(name)}`, { project: { ...p, spec: newSpec } });
    setProject(saved);
    setEditing(null);
  };
  const reload = async () => setProject(await request('GET', `/api/v1/projects/${enc(name)}`));
  return (
    <SettingsPage title={`Project ${name}`} parent={['/settings/projects', 'Projects']} error={loaded.error} loading={!p}>
      {p && (
        <div class="project-page" data-testid="project-page">
          <section class="card">
            <header class="page-head">
              <h2>General</h2>
              <button type="button" class="btn" onClick={() => setEditing('description')}>
                Edit description
              </button>
            </header>
            <p data-testid="description">{spec.description || <span class="muted">No description.</span>}</p>
          </section>
          <section class="card">
            <h2>Lists</h2>
            <dl class="fields lists">
              {LISTS.map((d) => (
                <div class="list-row" key={d.field}>
                  <ListView def={d} spec={spec} />
                  <button type="button" class="btn" aria-label={`Edit ${d.label.toLowerCase()}`} onClick={() => setEditing(d)}>
                    Edit
                  </button>
                </div>
              ))}
            </dl>
          </section>
          <Roles project={p} save={save} reload={reload} />
          <SyncWindows spec={spec} save={save} />
        </div>
      )}
      {editing === 'description' && <Description spec={spec} save={save} onClose={() => setEditing(null)} />}
      {editing && editing !== 'description' && (
        <ListEditor def={editing} rows={readList(spec, editing)} onClose={() => setEditing(null)} save={(rows) => save(writeList(spec, editing, rows))} />
      )}
    </SettingsPage>
  );
}
