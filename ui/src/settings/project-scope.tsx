// What a project's page shows without editing it: the repositories and clusters scoped to the
// project (their Secrets name it: Argo's GetDetailedProject, `GET .../detailed`), and the
// source integrity policies (`spec.sourceIntegrity.git.policies`: which repositories need
// commits signed by which GnuPG keys), which are edited in the project's YAML.
import type { Json } from '../api';
import { request } from '../api';
import { enc, useLoad } from './form';

export function Scoped({ name }: { name: string }) {
  const detailed = useLoad(() => request('GET', `/api/v1/projects/${enc(name)}/detailed`), [name]);
  const d = detailed.data;
  const list = (items: Json[] | undefined, text: (x: Json) => string, none: string) =>
    items?.length ? (
      <ul class="plain">
        {items.map((x) => (
          <li key={text(x)}>
            <code>{text(x)}</code>
          </li>
        ))}
      </ul>
    ) : (
      <span class="muted">{none}</span>
    );
  return (
    <section class="card" data-testid="scoped">
      <h2>Scoped repositories and clusters</h2>
      {detailed.error && (
        <p class="error" role="alert">
          {detailed.error}
        </p>
      )}
      {d && (
        <dl class="fields">
          <dt>Repositories</dt>
          <dd data-field="Scoped repositories">{list(d.repositories, (r) => r.repo, 'none: no repository is scoped to this project')}</dd>
          <dt>Clusters</dt>
          <dd data-field="Scoped clusters">{list(d.clusters, (c) => (c.name && c.name !== c.server ? `${c.name} (${c.server})` : c.server), 'none: no cluster is scoped to this project')}</dd>
        </dl>
      )}
    </section>
  );
}

/** A policy as a line: its repositories, then what their commits need. */
export function policyText(p: Json): string {
  const repos = (p.repos || []).map((r: Json) => r.url).join(', ') || '(no repository)';
  const gpg = p.gpg;
  if (!gpg) return `${repos}: no check`;
  const keys = gpg.keys?.length ? ` by ${gpg.keys.join(', ')}` : '';
  const mode = { none: 'none (no check)', head: 'head (the synced commit signed)', strict: 'strict (every commit signed)' }[gpg.mode as string] || gpg.mode || 'none';
  return `${repos}: GnuPG ${mode}${keys}`;
}

export function SourceIntegrity({ spec }: { spec: Json }) {
  const policies: Json[] | undefined = spec.sourceIntegrity?.git?.policies;
  return (
    <section class="card" data-testid="source-integrity">
      <h2>Source integrity</h2>
      {policies?.length ? (
        <ul class="plain">
          {policies.map((p, i) => (
            <li key={i}>
              <code>{policyText(p)}</code>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No source integrity policy{spec.signatureKeys?.length ? ': the signature keys under Lists apply' : ''}.</p>
      )}
      <p class="muted">Edited in the project's YAML (kubectl, or plumb proj).</p>
    </section>
  );
}
