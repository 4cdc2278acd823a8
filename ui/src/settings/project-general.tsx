// A project's general fields, as Argo's General panel (description, labels) plus
// `permitOnlyProjectScopedClusters`, and its orphaned-resource monitoring (on or off, warn).
import { useState } from 'preact/hooks';
import type { Json } from '../api';
import { parseMap, mapText } from './cluster-fields';
import { Check, FormDialog, Text, useForm } from './form';
import type { SaveSpec } from './project';

function GeneralForm({ project, save, onClose }: { project: Json; save: SaveSpec; onClose: () => void }) {
  const spec = project.spec || {};
  const form = useForm({ description: spec.description || '', labels: mapText(project.metadata?.labels), permitOnlyProjectScopedClusters: !!spec.permitOnlyProjectScopedClusters });
  const labelError = (text: string) => {
    try {
      parseMap(text, 'label');
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };
  return (
    <FormDialog
      title="Edit the project"
      form={form}
      onClose={onClose}
      submitLabel="Save"
      wide
      testid="general-form"
      onSubmit={() =>
        form.submit(
          (v) => ({ labels: labelError(v.labels) }),
          (v) => {
            const labels = parseMap(v.labels, 'label');
            return save(
              { ...spec, description: v.description.trim() || undefined, permitOnlyProjectScopedClusters: v.permitOnlyProjectScopedClusters || undefined },
              { ...project.metadata, labels: Object.keys(labels).length ? labels : undefined },
            );
          },
          [
            ['description', /description/i],
            ['labels', /label/i],
          ],
        )
      }
    >
      <Text form={form} name="description" label="Description" />
      <Text form={form} name="labels" label="Labels (optional)" rows={3} hint="One key=value a line." />
      <Check form={form} name="permitOnlyProjectScopedClusters" label="Permit only clusters of this project (project-scoped clusters) as destinations" />
    </FormDialog>
  );
}

export function General({ project, save }: { project: Json; save: SaveSpec }) {
  const [editing, setEditing] = useState(false);
  const spec = project.spec || {};
  const labels = mapText(project.metadata?.labels).split('\n').filter(Boolean);
  return (
    <section class="card">
      <header class="page-head">
        <h2>General</h2>
        <button type="button" class="btn" aria-label="Edit general" onClick={() => setEditing(true)}>
          Edit
        </button>
      </header>
      <p data-testid="description">{spec.description || <span class="muted">No description.</span>}</p>
      <dl class="fields">
        <dt>Labels</dt>
        <dd data-field="Labels">{labels.length ? labels.join(', ') : <span class="muted">none</span>}</dd>
        <dt>Destination clusters</dt>
        <dd data-field="Scoped clusters only">{spec.permitOnlyProjectScopedClusters ? 'only clusters of this project' : 'any cluster the destinations allow'}</dd>
      </dl>
      {editing && (
        <GeneralForm
          project={project}
          save={async (s, m) => {
            await save(s, m);
            setEditing(false);
          }}
          onClose={() => setEditing(false)}
        />
      )}
    </section>
  );
}

function MonitoringForm({ spec, save, onClose }: { spec: Json; save: SaveSpec; onClose: () => void }) {
  const form = useForm({ enabled: !!spec.orphanedResources, warn: !!spec.orphanedResources?.warn });
  return (
    <FormDialog
      title="Orphaned resources monitoring"
      form={form}
      onClose={onClose}
      submitLabel="Save"
      testid="monitoring-form"
      onSubmit={() =>
        form.submit(
          (v) => ({ warn: v.warn && !v.enabled ? 'A warning needs monitoring on.' : '' }),
          async (v) => {
            const next = { ...spec };
            // Off is Argo's DISABLE: the whole `orphanedResources`, its ignore list included.
            if (!v.enabled) delete next.orphanedResources;
            else next.orphanedResources = { ...(spec.orphanedResources || {}), warn: v.warn || undefined };
            await save(next);
            onClose();
          },
          [['warn', /warn|orphaned/i]],
        )
      }
    >
      <Check form={form} name="enabled" label="Monitor orphaned resources (objects in the destination namespaces no Application manages)" />
      <Check form={form} name="warn" label="Warn: an OrphanedResourceWarning condition on the Applications that have some" />
      {!form.values.enabled && spec.orphanedResources?.ignore?.length > 0 && <p class="muted">Turning monitoring off drops the ignore list too.</p>}
    </FormDialog>
  );
}

export function Monitoring({ spec, save }: { spec: Json; save: SaveSpec }) {
  const [editing, setEditing] = useState(false);
  const o = spec.orphanedResources;
  return (
    <section class="card" data-testid="monitoring">
      <header class="page-head">
        <h2>Orphaned resources</h2>
        <button type="button" class="btn" aria-label="Edit orphaned resources monitoring" onClick={() => setEditing(true)}>
          Edit
        </button>
      </header>
      <p data-field="Monitoring">{o ? `Monitored${o.warn ? ', with a warning condition' : ', without a warning'}; the ignore list is under Lists.` : 'Not monitored.'}</p>
      {editing && <MonitoringForm spec={spec} save={save} onClose={() => setEditing(false)} />}
    </section>
  );
}
