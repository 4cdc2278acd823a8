// What every settings form shares: fields with their label and their error next to them, a
// dialog whose Enter submits and Escape closes, the server's refusal placed on the field it
// names, confirmations, and lists loaded from the API.
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Modal } from '../modal';
import type { Json } from '../api';

export type Errors = Record<string, string>;

/**
 * The field a server message is about: the first whose pattern matches (the message names the
 * field, as in `repo: ...` or `username: ...`), else none (the message stays above the buttons).
 */
export function fieldOf(message: string, patterns: [string, RegExp][]): string | undefined {
  return patterns.find(([, re]) => re.test(message))?.[0];
}

/** A form's values, its errors per field and the message that belongs to no field. */
export function useForm<T extends Record<string, Json>>(initial: T) {
  const [values, setState] = useState<T>(initial);
  // What the fields hold now: a submit right after typing (Enter before the next render) must
  // send the typed values, not the last rendered ones (seen in the settings browser test).
  const latest = useRef<T>(initial);
  const setValues = (next: T | ((old: T) => T)) => {
    latest.current = typeof next === 'function' ? next(latest.current) : next;
    setState(latest.current);
  };
  const [errors, setErrors] = useState<Errors>({});
  const [general, setGeneral] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (k: string, v: Json) => {
    setValues((old) => ({ ...old, [k]: v }));
    // The error of a field goes once the field changes.
    setErrors((old) => (old[k] ? { ...old, [k]: '' } : old));
  };
  /**
   * Checks, then sends: `validate` gives the fields' errors found before sending; a refusal of
   * the server goes next to the field `patterns` find in its message, or above the buttons.
   */
  const submit = async (validate: (v: T) => Errors, send: (v: T) => Promise<void>, patterns: [string, RegExp][] = []) => {
    const current = latest.current;
    const found = Object.fromEntries(Object.entries(validate(current)).filter(([, m]) => m));
    setErrors(found);
    setGeneral('');
    if (Object.keys(found).length) {
      focusField(Object.keys(found)[0]);
      return;
    }
    setBusy(true);
    try {
      await send(current);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const f = fieldOf(msg, patterns);
      if (f) {
        setErrors({ [f]: msg });
        focusField(f);
      } else setGeneral(msg);
    } finally {
      setBusy(false);
    }
  };
  return { values, set, setValues, errors, setErrors, general, setGeneral, busy, submit };
}
export type Form<T extends Record<string, Json> = Record<string, Json>> = ReturnType<typeof useForm<T>>;

function focusField(name: string) {
  requestAnimationFrame(() => document.getElementById(`f-${name}`)?.focus());
}

export function FieldError({ form, name }: { form: Form<Json>; name: string }) {
  const e = form.errors[name];
  return e ? (
    <span class="field-error" id={`err-${name}`} data-testid={`error-${name}`} role="alert">
      {e}
    </span>
  ) : null;
}

const aria = (form: Form<Json>, name: string) => (form.errors[name] ? { 'aria-invalid': true as const, 'aria-describedby': `err-${name}` } : {});

/** A text input (or a text area with `rows`) with its label and its error. */
export function Text({
  form,
  name,
  label,
  type = 'text',
  rows,
  placeholder,
  hint,
  secret,
}: {
  form: Form<Json>;
  name: string;
  label: string;
  type?: 'text' | 'password';
  rows?: number;
  placeholder?: string;
  hint?: string;
  /** A credential: never offered to the browser's autofill, never spell-checked. */
  secret?: boolean;
}) {
  const common = {
    id: `f-${name}`,
    name,
    value: form.values[name] ?? '',
    placeholder,
    spellcheck: false,
    autoComplete: secret ? 'new-password' : 'off',
    onInput: (e: Event) => form.set(name, (e.currentTarget as HTMLInputElement).value),
    ...aria(form, name),
  };
  // The error sits beside the label, not in it: it describes the field, it does not rename it.
  return (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      {rows ? <textarea rows={rows} class="mono" {...common} /> : type === 'password' ? <input type="password" {...common} /> : <input type="text" {...common} />}
      {hint && <span class="muted hint">{hint}</span>}
      <FieldError form={form} name={name} />
    </div>
  );
}

export function Check({ form, name, label }: { form: Form<Json>; name: string; label: string }) {
  return (
    <>
      <label class="check">
        <input id={`f-${name}`} type="checkbox" name={name} checked={!!form.values[name]} onChange={(e) => form.set(name, e.currentTarget.checked)} {...aria(form, name)} />
        {label}
      </label>
      <FieldError form={form} name={name} />
    </>
  );
}

export function Select({ form, name, label, options }: { form: Form<Json>; name: string; label: string; options: (string | [string, string])[] }) {
  return (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <select id={`f-${name}`} name={name} value={form.values[name] ?? ''} onChange={(e) => form.set(name, e.currentTarget.value)} {...aria(form, name)}>
        {options.map((o) => {
          const [v, l] = Array.isArray(o) ? o : [o, o];
          return (
            <option key={v} value={v}>
              {l}
            </option>
          );
        })}
      </select>
      <FieldError form={form} name={name} />
    </div>
  );
}

/** A dialog holding a form: Enter in a field submits, Escape closes, errors stay in place. */
export function FormDialog({
  title,
  form,
  onClose,
  onSubmit,
  submitLabel,
  children,
  wide,
  testid,
}: {
  title: string;
  form: Form<Json>;
  onClose: () => void;
  onSubmit: () => void;
  submitLabel: string;
  children: ComponentChildren;
  wide?: boolean;
  testid?: string;
}) {
  const ref = useRef<HTMLFormElement>(null);
  // The dialog focuses its first control (Close); a form starts at its first field instead. A
  // layout effect: a plain one ran after paint and could pull the focus back from a field the
  // user (or the browser test) had already moved to, typing into the wrong field.
  useLayoutEffect(() => ref.current?.querySelector<HTMLElement>('input, select, textarea')?.focus(), []);
  return (
    <Modal title={title} onClose={onClose} wide={wide}>
      <form
        ref={ref}
        class="form settings-form"
        noValidate
        data-testid={testid}
        onSubmit={(e) => {
          e.preventDefault();
          onSubmit();
        }}
      >
        {children}
        {form.general && (
          <p class="error pre" role="alert" data-testid="form-error">
            {form.general}
          </p>
        )}
        <FormActions label={form.busy ? `${submitLabel}…` : submitLabel} busy={form.busy} onCancel={onClose} />
      </form>
    </Modal>
  );
}

/** A dialog's submit and Cancel buttons. */
function FormActions({ label, busy, danger, onCancel }: { label: string; busy: boolean; danger?: boolean; onCancel: () => void }) {
  return (
    <div class="form-actions">
      <button type="submit" class={`btn ${danger ? 'danger' : 'primary'}`} disabled={busy}>
        {label}
      </button>
      <button type="button" class="btn" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** "Delete X?" with the server's refusal shown in the dialog. */
export function Confirm({ title, body, action, onConfirm, onClose }: { title: string; body: ComponentChildren; action: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={title} onClose={onClose}>
      <form
        class="confirm"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            await onConfirm();
            onClose();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <div>{body}</div>
        {error && (
          <p class="error pre" role="alert">
            {error}
          </p>
        )}
        <FormActions label={action} busy={busy} danger onCancel={onClose} />
      </form>
    </Modal>
  );
}

/** A list from the API, reloaded on demand. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then((d) => live && (setData(d), setError('')))
      .catch((e) => live && setError((e as Error).message));
    return () => {
      live = false;
    };
  }, [n, ...deps]);
  return { data, error, reload: () => setN((x) => x + 1) };
}

/** A page of the settings area: its title, its buttons, the load error, then its content. */
export function SettingsPage({
  title,
  parent,
  actions,
  onRefresh,
  notice,
  error,
  loading,
  children,
}: {
  title: string;
  /** The list page above this one (`[path, title]`), for the breadcrumb. */
  parent?: [string, string];
  actions?: ComponentChildren;
  /** A Refresh button after the actions. */
  onRefresh?: () => void;
  /** What the last action did, under the title. */
  notice?: string;
  error?: string;
  loading?: boolean;
  children?: ComponentChildren;
}) {
  return (
    <div class="page settings">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/settings">Settings</a> /{' '}
        {parent && (
          <>
            <a href={parent[0]}>{parent[1]}</a> /{' '}
          </>
        )}
        <span>{title}</span>
      </nav>
      <header class="page-head">
        <h1>{title}</h1>
        <div class="toolbar">
          {actions}
          {onRefresh && (
            <button type="button" class="btn" onClick={onRefresh}>
              Refresh
            </button>
          )}
        </div>
      </header>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {loading && !error && <p class="muted">Loading…</p>}
      {children}
    </div>
  );
}

/** Argo's connection state: Successful, Failed or Unknown, with its message. */
export function Connection({ state }: { state?: { status?: string; message?: string; attemptedAt?: string } }) {
  const s = state?.status || 'Unknown';
  const cls = s === 'Successful' ? 'ok' : s === 'Failed' ? 'error' : 'muted';
  return (
    <span class="connection" data-testid="connection" data-status={s}>
      <span class={cls}>{s}</span>
      {state?.message && <span class="muted conn-msg"> {state.message}</span>}
    </span>
  );
}

/** A credential shown once, right after it was made (a token); gone once the dialog closes. */
export function ShowOnce({ title, value, onClose }: { title: string; value: string; onClose: () => void }) {
  return (
    <Modal title={title} onClose={onClose}>
      <p>Copy it now: it is not shown again.</p>
      <textarea readOnly rows={5} class="mono" aria-label="New token" data-testid="new-token" value={value} onFocus={(e) => e.currentTarget.select()} />
      <div class="form-actions">
        <button type="button" class="btn primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  );
}

export const enc = encodeURIComponent;
export const splitList = (s: string) =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);
