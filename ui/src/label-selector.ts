// Kubernetes label selectors as `kubectl -l` reads them (k8s.io/apimachinery labels.Parse):
// `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`, joined by
// commas, all of which must match. Argo's filter (label-selector.ts) splits on the first
// operator it finds and reads `team in (risk)` as the values "(risk)"; this reads the grammar.

export type Requirement = { key: string; op: 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin'; values: string[] };

const MAX = 4096;
const KEY = /^([A-Za-z0-9][-A-Za-z0-9_.]*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The requirements of `selector`, or an Error saying what could not be read and where. */
export function parseSelector(selector: string): Requirement[] {
  // A pasted blob is refused, not matched against every Application on each keystroke.
  if (selector.length > MAX) throw new Error(`a label selector is at most ${MAX} characters (this one has ${selector.length})`);
  const out: Requirement[] = [];
  let rest = selector.trim();
  while (rest) {
    let m: RegExpMatchArray | null;
    if ((m = rest.match(/^([^\s,!=()]+)\s+(in|notin)\s*\(([^()]*)\)\s*/))) {
      const values = m[3].split(',').map((v) => v.trim());
      for (const v of values) if (!VALUE.test(v) || v === '') throw new Error(`invalid value ${JSON.stringify(v)} in "${m[0].trim()}"`);
      out.push({ key: m[1], op: m[2] as 'in' | 'notin', values });
    } else if ((m = rest.match(/^([^\s,!=()]+)\s*(==|!=|=)\s*([^\s,!=()]*)\s*/))) {
      if (!VALUE.test(m[3])) throw new Error(`invalid value ${JSON.stringify(m[3])} in "${m[0].trim()}"`);
      out.push({ key: m[1], op: m[2] === '!=' ? '!=' : '=', values: [m[3]] });
    } else if ((m = rest.match(/^!\s*([^\s,!=()]+)\s*/))) {
      out.push({ key: m[1], op: '!exists', values: [] });
    } else if ((m = rest.match(/^([^\s,!=()]+)\s*(?=,|$)/))) {
      out.push({ key: m[1], op: 'exists', values: [] });
    } else {
      const what = /^[^\s,!=()]+\s+(in|notin)\b/.test(rest) ? `"${rest}": a set needs values in parentheses, as in "team in (a, b)"` : `cannot read "${rest}"`;
      throw new Error(what);
    }
    const r = out[out.length - 1];
    if (!KEY.test(r.key) || r.key.length > 317) throw new Error(`invalid label key ${JSON.stringify(r.key)}`);
    rest = rest.slice(m[0].length);
    if (rest && !rest.startsWith(',')) throw new Error(`expected "," before "${rest}"`);
    rest = rest.slice(1).trim();
  }
  return out;
}

export function matchesSelector(reqs: Requirement[], labels: Record<string, string>): boolean {
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case '!exists':
        return !has;
      case '=':
        return has && labels[r.key] === r.values[0];
      case '!=':
        return !has || labels[r.key] !== r.values[0];
      case 'in':
        return has && r.values.includes(labels[r.key]);
      case 'notin':
        return !has || !r.values.includes(labels[r.key]);
    }
  });
}

/** The selector's requirements, or the reason it cannot be read (then nothing matches). */
export function readSelector(selector: string): { reqs: Requirement[]; error: string } {
  try {
    return { reqs: parseSelector(selector), error: '' };
  } catch (e) {
    return { reqs: [], error: (e as Error).message };
  }
}
