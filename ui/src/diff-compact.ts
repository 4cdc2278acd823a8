// Argo CD's "Compact diff": unchanged runs of a diff shortened to a few lines of context around
// each change, with a marker saying how many lines were left out.
import type { Change } from 'diff';

export const CONTEXT = 3;

/** `parts` (from diffLines) with every unchanged run longer than twice the context cut down. */
export function compactParts(parts: Change[], context = CONTEXT): Change[] {
  return parts.map((p, i) => {
    if (p.added || p.removed) return p;
    const lines = p.value.replace(/\n$/, '').split('\n');
    const keepHead = i > 0 ? context : 0;
    const keepTail = i < parts.length - 1 ? context : 0;
    if (lines.length <= keepHead + keepTail + 1) return p;
    const cut = lines.length - keepHead - keepTail;
    const kept = [...lines.slice(0, keepHead), `⋯ ${cut} unchanged line${cut === 1 ? '' : 's'}`, ...lines.slice(lines.length - keepTail)];
    return { ...p, value: `${kept.join('\n')}\n`, count: kept.length };
  });
}
