// The Projects page (read only): sources, destinations, resource lists, sync windows, roles.
import { useEffect, useState } from 'preact/hooks';
import { get, type Json } from './api';

/**
 * One list of the project. `unset` says what an absent list means and `empty` what an explicit
 * empty one means: they differ (Argo: no `namespaceResourceWhitelist` permits every namespaced
 * kind, an empty one none).
 */
function Items({ label, items, render, unset = 'none', empty }: { label: string; items?: Json[] | null; render: (x: Json) => string; unset?: string; empty?: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-field={label}>
        {items && items.length ? (
          <ul class="plain">
            {items.map((x, i) => (
              <li key={i}>
                <code>{render(x)}</code>
              </li>
            ))}
          </ul>
        ) : (
          <span class="muted">{items == null ? unset : (empty ?? unset)}</span>
        )}
      </dd>
    </>
  );
}

const gk = (x: Json) => `${x.group || '(core)'}/${x.kind}`;

export function ProjectsPage() {
  const [projects, setProjects] = useState<Json[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    get('/api/v1/projects')
      .then((r) => setProjects((r.items || []).sort((a: Json, b: Json) => a.metadata.name.localeCompare(b.metadata.name))))
      .catch((e) => setError(e.message));
  }, []);
  return (
    <div class="page">
      <header class="page-head">
        <h1>Projects</h1>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {projects === null && !error && <p class="muted">Loading projects…</p>}
      {projects?.length === 0 && <p class="muted">No projects you may read.</p>}
      <div class="projects">
        {projects?.map((p) => {
          const s = p.spec || {};
          return (
            <section class="card project" key={p.metadata.name} aria-labelledby={`proj-${p.metadata.name}`} data-testid="project">
              <h2 id={`proj-${p.metadata.name}`}>{p.metadata.name}</h2>
              {s.description && <p class="muted">{s.description}</p>}
              <dl class="fields">
                <Items label="Source repositories" items={s.sourceRepos} render={(x) => String(x)} unset="none: no repository is permitted" />
                <Items
                  label="Destinations"
                  items={s.destinations}
                  render={(d) => `${d.name || d.server || '*'} → ${d.namespace || '*'}`}
                  unset="none: no destination is permitted"
                />
                <Items label="Cluster resources allowed" items={s.clusterResourceWhitelist} render={gk} unset="none: no cluster-scoped kind is permitted" />
                <Items label="Cluster resources denied" items={s.clusterResourceBlacklist} render={gk} unset="none" />
                <Items
                  label="Namespace resources allowed"
                  items={s.namespaceResourceWhitelist}
                  render={gk}
                  unset="all namespaced kinds (the list is unset)"
                  empty="none: the list is empty, no namespaced kind is permitted"
                />
                <Items label="Namespace resources denied" items={s.namespaceResourceBlacklist} render={gk} unset="none" />
                <Items
                  label="Sync windows"
                  items={s.syncWindows}
                  render={(w) =>
                    `${w.kind} ${w.schedule} for ${w.duration}${w.applications ? ` apps ${w.applications.join(',')}` : ''}${
                      w.namespaces ? ` namespaces ${w.namespaces.join(',')}` : ''
                    }${w.manualSync ? ' (manual sync allowed)' : ''}`
                  }
                />
                <Items label="Roles" items={s.roles} render={(r) => `${r.name}: ${(r.policies || []).length} policies, groups ${(r.groups || []).join(', ') || 'none'}`} />
              </dl>
            </section>
          );
        })}
      </div>
    </div>
  );
}
