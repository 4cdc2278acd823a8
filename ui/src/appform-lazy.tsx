// The app form with its YAML editor is a chunk of its own, fetched when a form is opened: the
// Applications page's bundle does not carry CodeMirror.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { AppFormProps } from './appform';
import { Modal } from './modal';

type Form = (p: AppFormProps) => JSX.Element;

export function LazyAppForm(props: AppFormProps) {
  const [Form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    import('./appform').then(
      (m) => setForm(() => m.AppForm),
      (e) => setError(`Could not load the form: ${(e as Error).message}`),
    );
  }, []);
  if (Form) return <Form {...props} />;
  return (
    <Modal title={props.app ? `Edit ${props.app.metadata.name}` : 'New application'} onClose={props.onClose}>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : (
        <p class="muted">Loading the editor…</p>
      )}
    </Modal>
  );
}
