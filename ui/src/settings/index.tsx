// The settings area (Argo's /settings): an overview of its pages, and which page a path shows.
// Loaded as a chunk of its own when a settings page is first opened.
import type { Route } from '../router';
import { AccountPage, AccountsPage, UserInfoPage } from './accounts';
import { CertsPage } from './certificates';
import { ClusterPage } from './cluster';
import { ClustersPage } from './clusters';
import { GpgKeysPage } from './gpgkeys';
import { ProjectPage } from './project';
import { ProjectsPage } from './projects';
import { ReposPage } from './repositories';

/** Argo's sections, with its paths. */
export const SECTIONS: [string, string, string][] = [
  ['repos', 'Repositories', 'Connect Git, Helm and OCI repositories, and credential templates'],
  ['certs', 'Repository certificates and known hosts', 'SSH known hosts and TLS certificates of repository servers'],
  ['gpgkeys', 'GnuPG keys', 'Public keys that sign the commits projects may require'],
  ['clusters', 'Clusters', 'Clusters Applications deploy to, and their connection'],
  ['projects', 'Projects', 'Sources, destinations, resource lists, roles and sync windows'],
  ['accounts', 'Accounts', 'Local accounts and their API tokens'],
];

function Overview() {
  return (
    <div class="page settings">
      <header class="page-head">
        <h1>Settings</h1>
      </header>
      <ul class="plain settings-list">
        {SECTIONS.map(([path, title, what]) => (
          <li key={path} class="card">
            <a href={`/settings/${path}`}>{title}</a>
            <p class="muted">{what}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function Settings({ route }: { route: Extract<Route, { page: 'settings' }> }) {
  switch (route.section) {
    case 'repos':
      return <ReposPage />;
    case 'certs':
      return <CertsPage />;
    case 'gpgkeys':
      return <GpgKeysPage />;
    case 'clusters':
      return route.name ? <ClusterPage server={route.name} /> : <ClustersPage />;
    case 'projects':
      return route.name ? <ProjectPage name={route.name} /> : <ProjectsPage />;
    case 'accounts':
      return route.name ? <AccountPage name={route.name} /> : <AccountsPage />;
    case 'user-info':
      return <UserInfoPage />;
    default:
      return <Overview />;
  }
}
