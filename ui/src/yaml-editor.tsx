// A YAML editor on CodeMirror 6 (@codemirror/view, state, commands, language, lang-yaml): line
// numbers, undo history, YAML highlighting and indentation. Only the app form loads it. Tab is
// left to the browser so the keyboard can leave the editor (CodeMirror's advice for
// accessibility); indentation comes from Enter, as in most YAML editing.
import { useEffect, useRef } from 'preact/hooks';
import { EditorState } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { HighlightStyle, bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { yaml } from '@codemirror/lang-yaml';

// Colours from the page's theme (style.css, light and dark), so highlighting keeps its contrast
// in both.
const highlight = HighlightStyle.define([
  { tag: tags.definition(tags.propertyName), color: 'var(--cm-key)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--cm-string)' },
  { tag: tags.lineComment, color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [tags.separator, tags.punctuation, tags.squareBracket, tags.brace, tags.meta], color: 'var(--muted)' },
  { tag: [tags.labelName, tags.typeName, tags.keyword], color: 'var(--cm-special)' },
]);

/** The editor owns its text once mounted (`value` is the text it starts with; the form mounts a
 * new editor each time it switches to YAML): feeding each keystroke back in as a new value
 * would race the editor's own updates. */
export function YamlEditor({ value, onChange, label, describedBy }: { value: string; onChange: (v: string) => void; label: string; describedBy?: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(highlight),
          yaml(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.contentAttributes.of({ 'aria-label': label, ...(describedBy ? { 'aria-describedby': describedBy } : {}) }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) changed.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
  }, []);


  return <div class="yaml-editor" ref={host} data-testid="yaml-editor" />;
}
