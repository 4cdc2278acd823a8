// The Projects page (read only): sources, destinations, resource lists, sync windows, roles.
import { useEffect, useState } from 'preact/hooks';
import { get, type Json } from './api';

function Items({ label, items, render }: { label: string; items?: Json[]; render: (x: Json) => string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {items && items.length ? (
          <ul class="plain">
            {items.map((x, i) => (
              <li key={i}>
                <code>{render(x)}</code>
              </li>
            ))}
          </ul>
        ) : (
          <span class="muted">none</span>
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
                <Items label="Source repositories" items={s.sourceRepos} render={(x) => String(x)} />
                <Items label="Destinations" items={s.destinations} render={(d) => `${d.name || d.server || '*'} → ${d.namespace || '*'}`} />
                <Items label="Cluster resources allowed" items={s.clusterResourceWhitelist} render={gk} />
                <Items label="Cluster resources denied" items={s.clusterResourceBlacklist} render={gk} />
                <Items label="Namespace resources allowed" items={s.namespaceResourceWhitelist} render={gk} />
                <Items label="Namespace resources denied" items={s.namespaceResourceBlacklist} render={gk} />
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
