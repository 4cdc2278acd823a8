// A project's roles: policies (Casbin lines of `proj:<project>:<role>`), groups (SSO groups
// that get the role), and the role's tokens (shown once when made).
import { useState } from 'preact/hooks';
import type { Json } from '../api';
import { Tokens } from './accounts';
import { Confirm, enc, FormDialog, splitList, Text, useForm } from './form';
import type { SaveSpec } from './project';

/** What is wrong with a role's policy lines (Argo's rules: `p, proj:<project>:<role>, <resource>,
 * <action>, <project>/<object>, allow|deny`), one message for the first wrong line. */
export function checkPolicies(text: string, project: string, role: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const [i, line] of lines.entries()) {
    const f = line.split(',').map((x) => x.trim());
    const where = `line ${i + 1}`;
    if (f.length !== 6 || f[0] !== 'p') return `${where}: a policy has six fields: p, proj:${project}:${role}, applications, get, ${project}/*, allow`;
    if (f[1] !== `proj:${project}:${role}`) return `${where}: the subject must be proj:${project}:${role}`;
    if (!f[4].startsWith(`${project}/`)) return `${where}: the object must start with ${project}/`;
    if (f[5] !== 'allow' && f[5] !== 'deny') return `${where}: the effect is allow or deny`;
  }
  return '';
}

function RoleForm({ project, role, spec, save, onClose }: { project: string; role: Json | null; spec: Json; save: SaveSpec; onClose: () => void }) {
  const form = useForm({ name: role?.name || '', description: role?.description || '', policies: (role?.policies || []).join('\n'), groups: (role?.groups || []).join('\n') });
  const roles: Json[] = spec.roles || [];
  return (
    <FormDialog
      title={role ? `Edit role ${role.name}` : 'New role'}
      form={form}
      onClose={onClose}
      submitLabel="Save"
      wide
      testid="role-form"
      onSubmit={() =>
        form.submit(
          (v) => ({
            name: !/^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$/.test(v.name.trim())
              ? 'Letters, digits, "-" and "_", starting and ending with a letter or digit.'
              : !role && roles.some((r) => r.name === v.name.trim())
                ? `The project has a role ${v.name.trim()} already.`
                : '',
            policies: checkPolicies(v.policies, project, v.name.trim()),
          }),
          async (v) => {
            const next = { ...(role || {}), name: v.name.trim(), description: v.description.trim() || undefined, policies: splitLines(v.policies), groups: splitList(v.groups) };
            if (!next.policies.length) delete next.policies;
            if (!next.groups.length) delete next.groups;
            await save({ ...spec, roles: role ? roles.map((r) => (r.name === role.name ? next : r)) : [...roles, next] });
            onClose();
          },
          [
            ['policies', /polic|subject|object|effect|action|resource/i],
            ['groups', /group/i],
            ['name', /role|name/i],
          ],
        )
      }
    >
      {role ? <p>Role {role.name}</p> : <Text form={form} name="name" label="Role name" />}
      <Text form={form} name="description" label="Description (optional)" />
      <Text form={form} name="policies" label="Policies, one a line" rows={5} hint={`p, proj:${project}:${form.values.name || 'ROLE'}, applications, sync, ${project}/*, allow`} />
      <Text form={form} name="groups" label="Groups, one a line (optional)" rows={3} />
    </FormDialog>
  );
}

const splitLines = (s: string) =>
  s
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);

export function Roles({ project, save, reload }: { project: Json; save: SaveSpec; reload: () => void }) {
  const name = project.metadata.name;
  const spec = project.spec || {};
  const roles: Json[] = [...(spec.roles || [])].sort((a, b) => a.name.localeCompare(b.name));
  const [editing, setEditing] = useState<Json | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Json | null>(null);
  return (
    <section class="card" data-testid="roles">
      <header class="page-head">
        <h2>Roles</h2>
        <button type="button" class="btn" onClick={() => setEditing('new')}>
          Add role
        </button>
      </header>
      {!roles.length && <p class="muted">No role.</p>}
      {roles.map((r) => (
        <article class="role" key={r.name} data-role={r.name} aria-label={`Role ${r.name}`}>
          <header class="page-head">
            <h3>{r.name}</h3>
            <div class="toolbar">
              <button type="button" class="btn" aria-label={`Edit role ${r.name}`} onClick={() => setEditing(r)}>
                Edit
              </button>
              <button type="button" class="btn danger" aria-label={`Delete role ${r.name}`} onClick={() => setDeleting(r)}>
                Delete
              </button>
            </div>
          </header>
          {r.description && <p class="muted">{r.description}</p>}
          <dl class="fields">
            <dt>Policies</dt>
            <dd>{r.policies?.length ? r.policies.map((x: string) => <code key={x} class="line">{x}</code>) : <span class="muted">none</span>}</dd>
            <dt>Groups</dt>
            <dd>{r.groups?.join(', ') || <span class="muted">none</span>}</dd>
          </dl>
          <h4>Tokens</h4>
          <Tokens
            tokens={r.jwtTokens || project.status?.jwtTokensByRole?.[r.name]?.items || []}
            createPath={`/api/v1/projects/${enc(name)}/roles/${enc(r.name)}/token`}
            extra={{ project: name, role: r.name }}
            deletePath={(t) => `/api/v1/projects/${enc(name)}/roles/${enc(r.name)}/token/${enc(String(t.iat))}${t.id ? `?id=${enc(t.id)}` : ''}`}
            onChanged={reload}
          />
        </article>
      ))}
      {editing && <RoleForm project={name} role={editing === 'new' ? null : editing} spec={spec} save={save} onClose={() => setEditing(null)} />}
      {deleting && (
        <Confirm
          title="Delete the role"
          body={<p>Delete role {deleting.name}? Its tokens stop working.</p>}
          action="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={() => save({ ...spec, roles: (spec.roles || []).filter((r: Json) => r.name !== deleting.name) })}
        />
      )}
    </section>
  );
}
