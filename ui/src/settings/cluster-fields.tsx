// What the cluster forms share (connect and edit): the fields of a cluster that are not its
// credentials (name, namespaces, project, labels, annotations), their checks, and which field a
// refusal of the server is about.
import type { Json } from '../api';
import { Check, splitList, Text, type Errors, type Form } from './form';

/** A Kubernetes label or annotation key: an optional DNS-subdomain prefix and `/`, then a name. */
const KEY = /^(([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `key=value` lines (or comma-separated) into a map; throws naming the entry that is wrong. */
export function parseMap(text: string, what: 'label' | 'annotation'): Record<string, string> {
  const out: Record<string, string> = {};
  const entries = what === 'label' ? splitList(text) : text.split('\n').map((x) => x.trim()).filter(Boolean);
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const [k, v] = eq < 0 ? [entry, ''] : [entry.slice(0, eq).trim(), entry.slice(eq + 1).trim()];
    if (eq < 0) throw new Error(`"${entry}" is not key=value.`);
    if (!KEY.test(k) || k.length > 316) throw new Error(`"${k}" is not a ${what} key (letters, digits, "-", "_" and ".", with an optional "example.com/" prefix).`);
    if (what === 'label' && !LABEL_VALUE.test(v)) throw new Error(`The value of ${k} is not a label value (at most 63 letters, digits, "-", "_" and ".").`);
    if (k in out) throw new Error(`${k} is given twice.`);
    out[k] = v;
  }
  return out;
}

/** A map as the text the fields hold, one `key=value` a line, sorted. */
export const mapText = (m?: Record<string, string>) =>
  Object.entries(m || {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

/** The values of the shared fields, from a cluster of the API (empty for a new one). */
export const scopeValues = (c: Json = {}) => ({
  name: c.name || '',
  namespaces: (c.namespaces || []).join(', '),
  clusterResources: !!c.clusterResources,
  project: c.project || '',
  labels: mapText(c.labels),
  annotations: mapText(c.annotations),
});
export type ScopeValues = ReturnType<typeof scopeValues>;

const mapError = (text: string, what: 'label' | 'annotation') => {
  try {
    parseMap(text, what);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

export function checkScope(v: ScopeValues): Errors {
  const bad = splitList(v.namespaces).find((n) => !NAMESPACE.test(n));
  return {
    name: v.name.trim() ? '' : 'A cluster name is required.',
    namespaces: bad ? `"${bad}" is not a namespace name (lower-case letters, digits and "-").` : '',
    clusterResources: v.clusterResources && !splitList(v.namespaces).length ? 'Only for a cluster limited to namespaces: without namespaces every kind is managed.' : '',
    project: v.project.trim() && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(v.project.trim()) ? 'A project name (lower-case letters, digits, "-" and ".").' : '',
    labels: mapError(v.labels, 'label'),
    annotations: mapError(v.annotations, 'annotation'),
  };
}

/** The shared fields as the API's `Cluster` fields (empty ones left out). */
export function scopeFields(v: ScopeValues): Json {
  const out: Json = { name: v.name.trim() };
  const namespaces = splitList(v.namespaces);
  if (namespaces.length) out.namespaces = namespaces;
  if (v.clusterResources) out.clusterResources = true;
  if (v.project.trim()) out.project = v.project.trim();
  const labels = parseMap(v.labels, 'label');
  if (Object.keys(labels).length) out.labels = labels;
  const annotations = parseMap(v.annotations, 'annotation');
  if (Object.keys(annotations).length) out.annotations = annotations;
  return out;
}

/** Which field a refusal of the server names (the first pattern that matches wins). */
export const CLUSTER_PATTERNS: [string, RegExp][] = [
  ['upsert', /upsert/i],
  ['bearerToken', /unauthori[sz]ed|\b401\b|bearer|token/i],
  ['caData', /caData|certificate|x509|tls|unknownissuer/i],
  ['namespaces', /namespace/i],
  ['clusterResources', /clusterResources/i],
  ['labels', /label/i],
  ['annotations', /annotation/i],
  ['project', /project/i],
  ['server', /server|uri|url|connect|dial|resolve|answer|REST config/i],
];

export function ScopeFields({ form, annotations }: { form: Form<Json>; annotations?: boolean }) {
  return (
    <>
      <Text form={form} name="namespaces" label="Namespaces (optional, comma-separated)" placeholder="team-a, team-b" hint="Only these namespaces are managed; empty: all." />
      <Check form={form} name="clusterResources" label="Manage cluster-scoped resources too (with namespaces)" />
      <Text form={form} name="project" label="Project (optional)" hint="A cluster of a project is usable by that project only." />
      <Text form={form} name="labels" label="Labels (optional)" rows={3} placeholder="env=staging" hint="One key=value a line." />
      {annotations && <Text form={form} name="annotations" label="Annotations (optional)" rows={3} hint="One key=value a line." />}
    </>
  );
}
