// The commit behind a revision (author and message, from `.../revisions/{rev}/metadata`), shown
// next to the synced revision in the header and in each history row, as Argo CD's UI does.
import { useEffect, useState } from 'preact/hooks';
import { revisionMetadata, type RevisionMetadata } from './api';

export function CommitInfo({
  app,
  ns,
  revision,
  sourceIndex = 0,
  compact,
}: {
  app: string;
  ns: string;
  revision?: string;
  sourceIndex?: number;
  compact?: boolean;
}) {
  const [meta, setMeta] = useState<RevisionMetadata | null | undefined>(undefined);
  useEffect(() => {
    setMeta(undefined);
    if (!revision) return;
    let live = true;
    revisionMetadata(app, ns, revision, sourceIndex).then((m) => live && setMeta(m));
    return () => {
      live = false;
    };
  }, [app, ns, revision, sourceIndex]);
  if (!revision || meta === null) return null;
  if (meta === undefined) return <span class="muted commit">…</span>;
  const subject = (meta.message || '').split('\n')[0];
  const author = (meta.author || '').replace(/\s*<[^>]*>$/, '');
  return (
    <span class={`commit ${compact ? 'compact' : ''}`} data-testid="commit" title={`${meta.message || ''}\n\n${meta.author || ''} ${meta.date || ''}`.trim()}>
      <span class="commit-msg">{subject}</span>
      {author && <span class="muted commit-author"> by {author}</span>}
    </span>
  );
}
