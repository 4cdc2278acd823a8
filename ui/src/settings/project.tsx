// One project's page (Argo's /settings/projects/<name>): its general fields, each list with its
// editor, the roles with their policies, groups and tokens, the sync windows, orphaned-resource
// monitoring, and read only the scoped repositories and clusters and the source integrity
// policies. Every change saves the whole
// project (`PUT /api/v1/projects/{name}` with its resourceVersion: a concurrent change is
// refused rather than overwritten).
import { useState } from 'preact/hooks';
import { request, type Json } from '../api';
import { enc, SettingsPage, useLoad } from './form';
import { LISTS, ListEditor, readList, writeList, type ListDef } from './lists';
import { ListView } from './projects';
import { General, Monitoring } from './project-general';
import { Roles } from './project-roles';
import { Scoped, SourceIntegrity } from './project-scope';
import { SyncWindows } from './project-windows';

/** Saves a new spec of the project (and new metadata, for its labels). */
export type SaveSpec = (spec: Json, metadata?: Json) => Promise<void>;

export function ProjectPage({ name }: { name: string }) {
  const loaded = useLoad(() => request('GET', `/api/v1/projects/${enc(name)}`), [name]);
  const [project, setProject] = useState<Json | null>(null);
  const [editing, setEditing] = useState<ListDef | null>(null);
  const p = project && project.metadata?.name === name ? project : loaded.data;
  const spec = p?.spec || {};
  const save: SaveSpec = async (newSpec, metadata) => {
    const saved = await request('PUT', `/api/v1/projects/${enc(name)}`, { project: { ...p, metadata: metadata || p.metadata, spec: newSpec } });
    setProject(saved);
    setEditing(null);
  };
  const reload = async () => setProject(await request('GET', `/api/v1/projects/${enc(name)}`));
  return (
    <SettingsPage title={`Project ${name}`} parent={['/settings/projects', 'Projects']} error={loaded.error} loading={!p}>
      {p && (
        <div class="project-page" data-testid="project-page">
          <General project={p} save={save} />
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
          <SyncWindows name={name} spec={spec} save={save} />
          <Monitoring spec={spec} save={save} />
          <Scoped name={name} />
          <SourceIntegrity spec={spec} />
        </div>
      )}
      {editing && (
        <ListEditor def={editing} rows={readList(spec, editing)} onClose={() => setEditing(null)} save={(rows) => save(writeList(spec, editing, rows))} />
      )}
    </SettingsPage>
  );
}
