import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef } from 'preact/hooks';

/** A dialog: focus moves into it, Escape and the backdrop close it, focus returns afterwards. */
export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  // Its own title id: a dialog over another (the session dialog over a form) keeps its name.
  const titleId = `modal-title-${useId()}`;
  // The latest onClose, not the first render's: the handler is registered once.
  const close = useRef(onClose);
  close.current = onClose;
  // A layout effect, so Escape works from the moment the dialog is on the page (a plain effect
  // runs after paint, and a key pressed in between was lost: seen in the settings browser test).
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>('input, button, select, textarea, [tabindex]');
    first?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close.current();
      if (e.key === 'Tab' && ref.current) {
        const f = [...ref.current.querySelectorAll<HTMLElement>('input, button, select, textarea, a[href]')].filter((x) => !x.hasAttribute('disabled'));
        if (!f.length) return;
        const last = f[f.length - 1];
        if (e.shiftKey && document.activeElement === f[0]) {
          e.preventDefault();
          last.focus();
        } else if (!e.shiftKey && document.activeElement === last) {
          e.preventDefault();
          f[0].focus();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      before?.focus?.();
    };
  }, []);
  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class={`modal card ${wide ? 'wide' : ''}`} role="dialog" aria-modal="true" aria-labelledby={titleId} ref={ref}>
        <header class="panel-head">
          <h2 id={titleId}>{title}</h2>
          <button type="button" class="btn ghost" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}
