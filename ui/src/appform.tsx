// The Application create/edit form: the common fields as a form, everything else in a YAML
// editor (CodeMirror 6), two views of one object. Loaded on demand (appform-lazy.tsx), so the
// editor never weighs on the Applications page. Create is Argo's `POST /api/v1/applications`,
// edit its `PUT /api/v1/applications/{name}`; the server's refusals are shown next to the field
// they name, or above the buttons.
import { useEffect, useMemo, useState } from 'preact/hooks';
import YAML from 'yaml';
import { appPath, canI, get, request, type Application, type Json } from './api';
import { Modal } from './modal';
import { YamlEditor } from './yaml-editor';

export const SYNC_OPTIONS = [
  'CreateNamespace=true',
  'ServerSideApply=true',
  'PruneLast=true',
  'ApplyOutOfSyncOnly=true',
  'RespectIgnoreDifferences=true',
  'Validate=false',
] as const;

const IN_CLUSTER = 'https://kubernetes.default.svc';
// Kubernetes object names (RFC 1123 subdomain), as the API server checks them.
const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Field = 'name' | 'project' | 'repoURL' | 'path' | 'targetRevision' | 'destination' | 'namespace';

export interface AppFormProps {
  /** The Application to edit; absent: a new one. */
  app?: Application;
  onClose: () => void;
  onSaved: (app: Application) => void;
}

/** What the form edits: the Application without status, operation and server-set metadata. */
export function editable(app?: Application): Json {
  if (!app) {
    return {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: '' },
      spec: {
        project: 'default',
        source: { repoURL: '', path: '', targetRevision: 'HEAD' },
        destination: { server: IN_CLUSTER, namespace: '' },
      },
    };
  }
  const m = app.metadata as Json;
  const metadata: Json = { name: m.name };
  for (const k of ['namespace', 'labels', 'annotations', 'finalizers', 'resourceVersion']) if (m[k] !== undefined) metadata[k] = m[k];
  return { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata, spec: structuredClone(app.spec ?? {}) };
}

/** The source the form edits: `spec.source`, or the first of `spec.sources`. */
function src(doc: Json): Json {
  if (doc.spec?.source) return doc.spec.source;
  if (Array.isArray(doc.spec?.sources) && doc.spec.sources.length) return doc.spec.sources[0];
  doc.spec ??= {};
  doc.spec.source = {};
  return doc.spec.source;
}

/** Which field a message of the server (or of our own checks) is about. Repository and
 * destination refusals name the project they come from, so they are told apart first. */
export function fieldOf(message: string): Field | null {
  const m = message.toLowerCase();
  if (/metadata\.name|application name|object name|invalid value.*name/.test(m)) return 'name';
  if (/repourl|repository|application repo /.test(m)) return 'repoURL';
  if (/destination.*namespace|namespace.*destination/.test(m) && !/do not match any of the allowed destinations|not permitted/.test(m)) return 'namespace';
  if (/destination|cluster/.test(m)) return 'destination';
  if (/project/.test(m)) return 'project';
  if (/targetrevision|revision/.test(m)) return 'targetRevision';
  if (/\bpath\b|chart/.test(m)) return 'path';
  return null;
}

/** The parts of a refusal (Argo joins the conditions of `application spec for X is invalid:`
 * with ";"), each with the field it concerns. */
export function refusalParts(message: string): { field: Field | null; text: string }[] {
  const m = message.match(/^application spec for \S+ is invalid: ([\s\S]*)$/);
  const parts = m ? m[1].split(/;(?=[A-Za-z]+Error: )/) : [message];
  return parts.map((p) => {
    const text = p.replace(/^[A-Za-z]+Error: /, '');
    return { field: fieldOf(text), text };
  });
}

/** Our own checks before the request (the server checks again). */
export function check(doc: Json, creating: boolean): Partial<Record<Field, string>> {
  const e: Partial<Record<Field, string>> = {};
  const name = doc.metadata?.name || '';
  if (creating) {
    if (!name) e.name = 'A name is required.';
    else if (name.length > 253 || !NAME_RE.test(name)) e.name = 'Lower-case letters, digits, "-" and "."; starting and ending with a letter or digit.';
  }
  if (!doc.spec?.project) e.project = 'A project is required.';
  const s = doc.spec?.source ?? doc.spec?.sources?.[0];
  if (!s?.repoURL) e.repoURL = 'A repository URL is required.';
  const d = doc.spec?.destination || {};
  if (!d.server && !d.name) e.destination = 'A destination cluster (server URL or name) is required.';
  if (d.server && d.name) e.destination = "A destination can't have both a name and a server.";
  return e;
}

export function AppForm({ app, onClose, onSaved }: AppFormProps) {
  const creating = !app;
  const [doc, setDoc] = useState<Json>(() => editable(app));
  const [view, setView] = useState<'form' | 'yaml'>('form');
  const [text, setText] = useState('');
  const [yamlError, setYamlError] = useState('');
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [serverError, setServerError] = useState('');
  const [busy, setBusy] = useState(false);
  const [projects, setProjects] = useState<string[]>([]);
  const [allowed, setAllowed] = useState<boolean | null>(null);

  useEffect(() => {
    get<{ items: Json[] | null }>('/api/v1/projects')
      .then((r) => setProjects((r.items || []).map((p) => p.metadata?.name).filter(Boolean)))
      .catch(() => setProjects([]));
  }, []);

  // RBAC: create (or update) in the chosen project, asked as the user types.
  const project = doc.spec?.project || '';
  const name = doc.metadata?.name || '';
  useEffect(() => {
    if (!project) return;
    const t = window.setTimeout(() => {
      canI('applications', creating ? 'create' : 'update', `${project}/${name || '*'}`).then(setAllowed);
    }, 250);
    return () => clearTimeout(t);
  }, [project, name]);

  const s: Json = doc.spec?.source ?? doc.spec?.sources?.[0] ?? {};
  const multi = Array.isArray(doc.spec?.sources) && doc.spec.sources.length > 1 && !doc.spec?.source;
  const helm = s.chart !== undefined;
  const dest = doc.spec?.destination || {};
  const byName = dest.name !== undefined && dest.server === undefined;
  const automated = doc.spec?.syncPolicy?.automated;
  const options: string[] = doc.spec?.syncPolicy?.syncOptions || [];

  /** A change of the document through the form. */
  const edit = (f: (d: Json) => void) => {
    const next = structuredClone(doc);
    f(next);
    setDoc(next);
    // What was refused was the previous document.
    setServerError('');
    setErrors({});
  };
  const setSource = (k: string, v: string) => edit((d) => void (src(d)[k] = v));
  const setPolicy = (f: (p: Json) => void) =>
    edit((d) => {
      d.spec.syncPolicy ??= {};
      f(d.spec.syncPolicy);
      if (d.spec.syncPolicy.syncOptions?.length === 0) delete d.spec.syncPolicy.syncOptions;
      if (Object.keys(d.spec.syncPolicy).length === 0) delete d.spec.syncPolicy;
    });

  const toYaml = (d: Json) => YAML.stringify(d, { lineWidth: 0 });
  const fromYaml = (t: string): Json | null => {
    try {
      const parsed = YAML.parse(t);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the document is not a mapping');
      setYamlError('');
      return parsed;
    } catch (e) {
      setYamlError(`YAML: ${(e as Error).message}`);
      return null;
    }
  };

  const switchTo = (v: 'form' | 'yaml') => {
    if (v === view) return;
    if (v === 'yaml') {
      setText(toYaml(doc));
      setView('yaml');
    } else {
      const parsed = fromYaml(text);
      if (parsed) {
        setDoc(parsed);
        setView('form');
      }
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const body = view === 'yaml' ? fromYaml(text) : doc;
    if (!body) return;
    if (view === 'yaml') setDoc(body);
    const found = check(body, creating);
    setErrors(found);
    setServerError('');
    if (Object.keys(found).length) return;
    if (!creating && body.metadata?.name !== app!.metadata.name) {
      setServerError(`metadata.name cannot change (${app!.metadata.name}).`);
      return;
    }
    setBusy(true);
    try {
      const saved = creating
        ? await request<Application>('POST', '/api/v1/applications', body)
        : await request<Application>('PUT', appPath(app!.metadata.name, app!.metadata.namespace), body);
      onSaved(saved);
    } catch (err) {
      // Each refusal once: under its field when the form shows one, else below the form.
      const msg = (err as Error).message;
      const parts = refusalParts(msg);
      if (view === 'form' && parts.some((p) => p.field)) {
        const found: Partial<Record<Field, string>> = {};
        for (const p of parts) if (p.field) found[p.field] = found[p.field] ? `${found[p.field]}\n${p.text}` : p.text;
        setErrors(found);
        const rest = parts.filter((p) => !p.field).map((p) => p.text);
        setServerError(rest.join('\n'));
      } else {
        setServerError(msg);
      }
    } finally {
      setBusy(false);
    }
  };

  const denied = allowed === false ? `RBAC denies applications, ${creating ? 'create' : 'update'}, ${project}/${name || '*'}` : '';
  const title = creating ? 'New application' : `Edit ${app!.metadata.name}`;
  const projectList = useMemo(() => [...new Set([...projects, 'default'])].sort(), [projects]);

  const err = (f: Field) =>
    errors[f] ? (
      <span class="field-error" id={`err-${f}`} data-testid={`error-${f}`}>
        {errors[f]}
      </span>
    ) : null;
  const aria = (f: Field) => (errors[f] ? { 'aria-invalid': true as const, 'aria-describedby': `err-${f}` } : {});

  return (
    <Modal title={title} onClose={onClose} wide>
      <form class="form app-form" onSubmit={submit} data-testid="app-form" noValidate>
        <div class="seg" role="group" aria-label="Editor">
          <button type="button" class="btn" aria-pressed={view === 'form'} onClick={() => switchTo('form')}>
            Form
          </button>
          <button type="button" class="btn" aria-pressed={view === 'yaml'} onClick={() => switchTo('yaml')}>
            YAML
          </button>
        </div>
        {view === 'form' ? (
          <div class="form-grid">
            <fieldset>
              <legend>General</legend>
              <label>
                Application name
                <input
                  name="name"
                  value={name}
                  readOnly={!creating}
                  required
                  autoComplete="off"
                  spellcheck={false}
                  onInput={(e) => {
                    const v = e.currentTarget.value;
                    edit((d) => void (d.metadata.name = v));
                  }}
                  {...aria('name')}
                />
                {err('name')}
              </label>
              <label>
                Project
                <input
                  name="project"
                  list="app-form-projects"
                  value={project}
                  required
                  autoComplete="off"
                  onInput={(e) => {
                    const v = e.currentTarget.value;
                    edit((d) => void (d.spec.project = v));
                  }}
                  {...aria('project')}
                />
                <datalist id="app-form-projects">
                  {projectList.map((p) => (
                    <option key={p} value={p} />
                  ))}
                </datalist>
                {err('project')}
              </label>
            </fieldset>
            <fieldset>
              <legend>Source</legend>
              {multi && <p class="muted">This application has {doc.spec.sources.length} sources: the form edits the first, the YAML holds all.</p>}
              <label>
                Repository URL
                <input name="repoURL" value={s.repoURL || ''} required spellcheck={false} onInput={(e) => setSource('repoURL', e.currentTarget.value)} {...aria('repoURL')} />
                {err('repoURL')}
              </label>
              <div class="radios" role="radiogroup" aria-label="Source type">
                <label class="check">
                  <input
                    type="radio"
                    name="sourceType"
                    checked={!helm}
                    onChange={() =>
                      edit((d) => {
                        const x = src(d);
                        x.path = x.chart ?? x.path ?? '';
                        delete x.chart;
                      })
                    }
                  />{' '}
                  Directory in Git
                </label>
                <label class="check">
                  <input
                    type="radio"
                    name="sourceType"
                    checked={helm}
                    onChange={() =>
                      edit((d) => {
                        const x = src(d);
                        x.chart = x.path ?? '';
                        delete x.path;
                      })
                    }
                  />{' '}
                  Helm chart
                </label>
              </div>
              <label>
                {helm ? 'Chart' : 'Path'}
                <input
                  name={helm ? 'chart' : 'path'}
                  value={(helm ? s.chart : s.path) || ''}
                  spellcheck={false}
                  onInput={(e) => setSource(helm ? 'chart' : 'path', e.currentTarget.value)}
                  {...aria('path')}
                />
                {err('path')}
              </label>
              <label>
                {helm ? 'Chart version' : 'Target revision'}
                <input
                  name="targetRevision"
                  value={s.targetRevision || ''}
                  placeholder="HEAD"
                  spellcheck={false}
                  onInput={(e) => setSource('targetRevision', e.currentTarget.value)}
                  {...aria('targetRevision')}
                />
                {err('targetRevision')}
              </label>
            </fieldset>
            <fieldset>
              <legend>Destination</legend>
              <div class="radios" role="radiogroup" aria-label="Cluster by">
                <label class="check">
                  <input
                    type="radio"
                    name="destBy"
                    checked={!byName}
                    onChange={() =>
                      edit((d) => {
                        d.spec.destination ??= {};
                        delete d.spec.destination.name;
                        d.spec.destination.server ??= IN_CLUSTER;
                      })
                    }
                  />{' '}
                  Cluster URL
                </label>
                <label class="check">
                  <input
                    type="radio"
                    name="destBy"
                    checked={byName}
                    onChange={() =>
                      edit((d) => {
                        d.spec.destination ??= {};
                        delete d.spec.destination.server;
                        d.spec.destination.name ??= 'in-cluster';
                      })
                    }
                  />{' '}
                  Cluster name
                </label>
              </div>
              <label>
                {byName ? 'Cluster name' : 'Cluster URL'}
                <input
                  name={byName ? 'destName' : 'destServer'}
                  value={(byName ? dest.name : dest.server) || ''}
                  spellcheck={false}
                  onInput={(e) => {
                    const v = e.currentTarget.value;
                    edit((d) => {
                      d.spec.destination ??= {};
                      d.spec.destination[byName ? 'name' : 'server'] = v;
                    });
                  }}
                  {...aria('destination')}
                />
                {err('destination')}
              </label>
              <label>
                Namespace
                <input
                  name="destNamespace"
                  value={dest.namespace || ''}
                  spellcheck={false}
                  onInput={(e) => {
                    const v = e.currentTarget.value;
                    edit((d) => {
                      d.spec.destination ??= {};
                      d.spec.destination.namespace = v;
                    });
                  }}
                  {...aria('namespace')}
                />
                {err('namespace')}
              </label>
            </fieldset>
            <fieldset>
              <legend>Sync policy</legend>
              <label>
                Sync
                <select
                  name="syncPolicy"
                  aria-label="Sync policy"
                  value={automated ? 'automatic' : 'manual'}
                  onChange={(e) => {
                    const auto = e.currentTarget.value === 'automatic';
                    setPolicy((p) => {
                      if (auto) p.automated ??= {};
                      else delete p.automated;
                    });
                  }}
                >
                  <option value="manual">Manual</option>
                  <option value="automatic">Automatic</option>
                </select>
              </label>
              {automated && (
                <>
                  <label class="check">
                    <input type="checkbox" checked={!!automated.prune} onChange={(e) => {
                      const on = e.currentTarget.checked;
                      setPolicy((p) => void (p.automated.prune = on));
                    }} />{' '}
                    Prune resources
                  </label>
                  <label class="check">
                    <input type="checkbox" checked={!!automated.selfHeal} onChange={(e) => {
                      const on = e.currentTarget.checked;
                      setPolicy((p) => void (p.automated.selfHeal = on));
                    }} />{' '}
                    Self heal
                  </label>
                </>
              )}
              <div class="sync-options" role="group" aria-label="Sync options">
                {SYNC_OPTIONS.map((o) => (
                  <label class="check" key={o}>
                    <input
                      type="checkbox"
                      checked={options.includes(o)}
                      onChange={(e) => {
                        const on = e.currentTarget.checked;
                        setPolicy((p) => {
                          const cur: string[] = p.syncOptions || [];
                          p.syncOptions = on ? [...cur.filter((x) => x !== o), o] : cur.filter((x) => x !== o);
                        });
                      }}
                    />{' '}
                    {o}
                  </label>
                ))}
              </div>
            </fieldset>
          </div>
        ) : (
          <div class="yaml-view">
            <p class="muted" id="yaml-help">
              The whole Application (everything the form does not show: Helm values, Kustomize options, ignoreDifferences, more sources…). Tab leaves the editor.
            </p>
            <YamlEditor value={text} onChange={setText} label="Application YAML" describedBy="yaml-help" />
            {yamlError && (
              <p class="error pre" role="alert" data-testid="yaml-error">
                {yamlError}
              </p>
            )}
            {Object.values(errors).map((m) => (
              <p class="error" key={m}>
                {m}
              </p>
            ))}
          </div>
        )}
        {serverError && (
          <p class="error" role="alert" data-testid="form-error">
            {serverError}
          </p>
        )}
        <div class="form-actions">
          <span title={denied || undefined}>
            <button type="submit" class="btn primary" disabled={busy || allowed === false} aria-describedby={denied ? 'form-denied' : undefined}>
              {busy ? 'Saving…' : creating ? 'Create' : 'Save'}
            </button>
          </span>
          <button type="button" class="btn" onClick={onClose}>
            Cancel
          </button>
          {denied && (
            <span id="form-denied" class="muted" data-testid="form-denied">
              {denied}
            </span>
          )}
        </div>
      </form>
    </Modal>
  );
}
