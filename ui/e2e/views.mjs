// The views an Argo CD user works in every day, checked by geometry in Chromium (issue #32's
// defects 6, 7, 9, 10 and 12); started by crates/plumb-server/tests/ui/views.rs. Every check
// runs even when one before it failed, so one run lists every defect; the run fails if any did.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_APP (synced, labelled team=risk, its
// ConfigMap drifted), PLUMB_REPO_URL, PLUMB_OTHER_REPO_URL (reachable, not in the narrow project), PLUMB_DEST_NAMESPACE, PLUMB_NARROW_PROJECT (permits
// PLUMB_REPO_URL and PLUMB_DEST_NAMESPACE only).
import { page, context, assert, login, shot, run } from './settings-lib.mjs';

const base = process.env.PLUMB_UI_URL;
const appName = process.env.PLUMB_APP;
const repoUrl = process.env.PLUMB_REPO_URL;
const destNs = process.env.PLUMB_DEST_NAMESPACE;
const otherRepo = process.env.PLUMB_OTHER_REPO_URL;
const narrow = process.env.PLUMB_NARROW_PROJECT;
const failed = [];

/** A check that records its failure and lets the next ones run. */
async function check(name, f) {
  const t = Date.now();
  try {
    await f();
    console.log(`ok - ${name} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
  } catch (e) {
    console.log(`not ok - ${name}: ${e.message.split('\n')[0]}`);
    failed.push(name);
    await shot(`failed-${failed.length}`);
    await page.keyboard.press('Escape').catch(() => {});
  }
}

/** Horizontal overflow of the page and of every element that clips its content. */
const overflow = () =>
  page.evaluate(() => {
    const out = [];
    const d = document.documentElement;
    if (d.scrollWidth > d.clientWidth) out.push(`page ${d.scrollWidth} > ${d.clientWidth}`);
    for (const el of document.querySelectorAll('main *')) {
      const cs = getComputedStyle(el);
      // Text cut with an ellipsis whose whole value is the title is shortened, not lost.
      if (cs.textOverflow === 'ellipsis' && el.title) continue;
      if (cs.overflowX === 'visible' && el.tagName !== 'TABLE') continue;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && !['auto', 'scroll'].includes(cs.overflowX))
        out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return out;
  });

/** Whether `inner` (a selector's elements) lie within the viewport and their clipping cell. */
const clipped = (sel) =>
  page.evaluate((s) => {
    const out = [];
    for (const el of document.querySelectorAll(s)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.right > document.documentElement.clientWidth) out.push(`${el.textContent} ends at ${r.right}`);
      const cell = el.closest('td, dd, th');
      if (cell) {
        const c = cell.getBoundingClientRect();
        if (r.right > c.right + 0.5 || r.left < c.left - 0.5) out.push(`${el.textContent} cut by its cell (${r.right} > ${c.right})`);
      }
    }
    return out;
  }, sel);

/** WCAG contrast of an element's text on the first opaque background behind it. */
const contrast = (sel) =>
  page.evaluate((s) => {
    const el = document.querySelector(s);
    if (!el) return 0;
    const rgb = (c) => c.match(/[\d.]+/g).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    let bg = null;
    for (let e = el; e && !bg; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0.99) bg = c.slice(0, 3);
      if (c.length === 4 && c[3] === 0) bg = null;
    }
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(bg || [255, 255, 255])];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }, sel);

/** Edge segments of the tree that cross a node box other than their two ends. */
const crossings = () =>
  page.evaluate(() => {
    const boxes = [...document.querySelectorAll('.node-pos')].map((n) => ({
      id: n.dataset.id,
      x: n.offsetLeft + 2,
      y: n.offsetTop + 2,
      w: n.offsetWidth - 4,
      h: n.offsetHeight - 4,
      label: n.textContent,
    }));
    const hits = (p, q, b) => {
      // Liang–Barsky clipping of segment p→q against box b.
      let [t0, t1] = [0, 1];
      const dx = q.x - p.x;
      const dy = q.y - p.y;
      for (const [pp, qq] of [[-dx, p.x - b.x], [dx, b.x + b.w - p.x], [-dy, p.y - b.y], [dy, b.y + b.h - p.y]]) {
        if (pp === 0) {
          if (qq < 0) return false;
        } else {
          const r = qq / pp;
          if (pp < 0) t0 = Math.max(t0, r);
          else t1 = Math.min(t1, r);
        }
      }
      return t0 < t1;
    };
    const out = [];
    for (const e of document.querySelectorAll('svg.edges [data-from]')) {
      const pts = e.getAttribute('points').trim().split(/\s+/).map((s) => {
        const [x, y] = s.split(',').map(Number);
        return { x, y };
      });
      for (let i = 1; i < pts.length; i++)
        for (const b of boxes) {
          if (b.id === e.dataset.from || b.id === e.dataset.to) continue;
          if (hits(pts[i - 1], pts[i], b)) out.push(`${e.dataset.from} → ${e.dataset.to} crosses ${b.label}`);
        }
    }
    return { edges: document.querySelectorAll('svg.edges [data-from]').length, out };
  });

async function appsList(width) {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${base}/applications?view=list`);
  await page.getByTestId('app-row').first().waitFor();
  const o = await overflow();
  assert(o.length === 0, `overflow at ${width} px: ${o.join('; ')}`);
  const cut = await clipped('.apps-table th, .apps-table .status');
  assert(cut.length === 0, `clipped at ${width} px: ${cut.join('; ')}`);
  // A name may end in an ellipsis in a narrow window, its whole value as the cell's title.
  const names = await page.locator('[data-testid=app-row] td:first-child').evaluateAll((tds) =>
    tds.filter((td) => td.scrollWidth > td.clientWidth && td.title !== td.textContent.trim()).map((td) => td.textContent),
  );
  assert(names.length === 0, `names cut without their title at ${width} px: ${names.join(', ')}`);
}

await run('views', async () => {
  await login('/applications', process.env.PLUMB_ADMIN_PASSWORD);
  await page.locator(`[data-testid=app-tile][data-app="${appName}"]`).waitFor();

  for (const w of [1440, 1280, 1024])
    await check(`the Applications list fits ${w} px: no horizontal scroll, no column or status cut`, () => appsList(w));
  await check('status pills of a tile are not cut at 1024 px', async () => {
    await page.goto(`${base}/applications`);
    await page.locator('[data-testid=app-tile]').first().waitFor();
    const cut = await clipped('.tile-status .status');
    assert(cut.length === 0, cut.join('; '));
  });
  await page.setViewportSize({ width: 1440, height: 900 });

  await check('the "Live" marker has a contrast of at least 4.5:1', async () => {
    await page.goto(`${base}/applications`);
    await page.locator('.live.on').waitFor();
    const c = await contrast('.live.on');
    assert(c >= 4.5, `contrast ${c.toFixed(2)}:1`);
  });

  await check('a click anywhere on a tile opens the Application', async () => {
    await page.goto(`${base}/applications`);
    const t = page.locator(`[data-testid=app-tile][data-app="${appName}"]`);
    const box = await t.boundingBox();
    await page.mouse.click(box.x + box.width - 20, box.y + box.height - 20);
    await page.waitForURL(new RegExp(`/applications/[^/]+/${appName}$`));
  });

  const shownApps = async (sel) => {
    await page.goto(`${base}/applications?view=list&labels=${encodeURIComponent(sel)}`);
    await page.locator('.apps-table').waitFor();
    await page.waitForTimeout(200); // the list filters synchronously; let it render
    return page.locator('[data-testid=app-row]').evaluateAll((rows) => rows.map((r) => r.dataset.app));
  };
  await check('the label filter reads Kubernetes selectors (in, notin, !key, key, =, ==, !=)', async () => {
    const cases = [
      ['team in (risk)', (n) => n === appName],
      ['team in (risk, ops)', (n) => n === appName],
      ['team notin (risk)', (n) => n !== appName],
      ['team==risk', (n) => n === appName],
      ['team!=risk', (n) => n !== appName],
      ['!team', () => false],
      ['team', () => true],
      ['team in (risk),team', (n) => n === appName],
    ];
    for (const [sel, want] of cases) {
      const got = await shownApps(sel);
      const all = await page.evaluate(async () => (await (await fetch('/api/v1/applications')).json()).items.map((a) => a.metadata.name));
      const expected = all.filter(want).sort();
      assert(JSON.stringify(got.sort()) === JSON.stringify(expected), `${sel}: shows ${got.join(',') || 'nothing'}, want ${expected.join(',') || 'nothing'}`);
    }
  });
  await check('a label selector that cannot be read says so', async () => {
    await shownApps('team in (risk');
    const msg = page.getByTestId('labels-error');
    await msg.waitFor();
    assert(/\(|parenthes|selector/i.test(await msg.innerText()), await msg.innerText());
  });

  await check('the namespace filter is bounded and lists the namespaces of the listed apps; Labels stays in view', async () => {
    await page.goto(`${base}/applications`);
    await page.locator('[data-testid=app-tile]').first().waitFor();
    const facet = page.locator('fieldset.facet', { has: page.locator('legend', { hasText: 'Namespaces' }) });
    const h = (await facet.boundingBox()).height;
    assert(h <= 240, `the Namespaces filter is ${h} px high`);
    const labels = await page.getByLabel('Label selector').boundingBox();
    assert(labels && labels.y + labels.height <= 900, `the Labels input is at ${labels?.y} px, below the 900 px window`);
    await page.goto(`${base}/applications?labels=team%3Drisk`);
    await page.locator('[data-testid=app-tile]').first().waitFor();
    const names = await facet.locator('.facet-name').allInnerTexts();
    assert(names.length === 1 && names[0] === destNs, `namespaces offered with team=risk: ${names.join(', ')}`);
  });

  // The tree.
  await page.goto(`${base}/applications`);
  await page.locator(`[data-testid=app-tile][data-app="${appName}"] .tile-title`).click();
  await page.waitForURL(new RegExp(`/applications/[^/]+/${appName}$`));
  const appNs = new URL(page.url()).pathname.split('/')[2];
  const tree = page.getByTestId('resource-tree');
  await tree.locator('[data-kind=Pod]').first().waitFor({ timeout: 120_000 });
  await tree.locator('[data-kind=EndpointSlice]').first().waitFor({ timeout: 120_000 });
  await shot('views-tree');

  await check('no edge of the tree crosses a node it does not connect', async () => {
    const { edges, out } = await crossings();
    assert(edges >= 6, `only ${edges} edges drawn (with data-from/data-to)`);
    assert(out.length === 0, out.join('; '));
  });
  await check('ReplicaSets and Pods tell apart: the name ends are shown, a ReplicaSet shows rev:N', async () => {
    // The end of each name is drawn whole (its own box inside the node, nothing cut).
    const nodes = await tree.locator('[data-kind=ReplicaSet], [data-kind=Pod]').evaluateAll((els) =>
      els.map((e) => {
        const n = e.querySelector('.node-name');
        const tail = n.querySelector('.name-tail');
        const [nr, tr] = [e.getBoundingClientRect(), tail?.getBoundingClientRect()];
        const whole = !tail ? n.scrollWidth <= n.clientWidth : tail.scrollWidth <= tail.clientWidth + 1 && tr.right <= nr.right && tr.width > 0;
        return { kind: e.dataset.kind, name: e.dataset.name, end: tail ? tail.textContent : n.textContent, whole, text: e.innerText };
      }),
    );
    assert(nodes.length >= 3, `${nodes.length} ReplicaSet and Pod nodes`);
    const ends = nodes.map((n) => n.end);
    assert(new Set(ends).size === ends.length, `name ends alike: ${ends.join(' | ')}`);
    for (const n of nodes) {
      assert(n.whole, `the end of ${n.name} is cut`);
      assert(n.name.endsWith(n.end) && n.end.length >= 5, `${n.name} ends as ${n.end}`);
      if (n.kind === 'ReplicaSet') assert(/rev:1\b/i.test(n.text), `ReplicaSet ${n.name} shows no revision: ${n.text}`);
    }
  });
  await check('clicking the Application node opens its summary', async () => {
    await tree.locator('[data-kind=Application]').click();
    const panel = page.getByTestId('resource-panel');
    await panel.waitFor();
    await panel.getByText(repoUrl).first().waitFor();
    await page.getByRole('button', { name: 'Close panel' }).click();
  });
  await check('opening a panel from the keyboard moves focus into it; closing returns it', async () => {
    const node = tree.locator('[data-kind=Deployment]').first();
    await node.focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('resource-panel').waitFor();
    await page.waitForFunction(() => document.activeElement?.closest('[data-testid=resource-panel]'));
    await page.keyboard.press('Escape');
    await page.getByTestId('resource-panel').waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.dataset?.kind === 'Deployment');
  });
  await check('the side-by-side diff fits its panel; a compact mode shows only the changes', async () => {
    await tree.locator('[data-kind=ConfigMap]').first().click();
    const panel = page.getByTestId('resource-panel');
    await panel.getByRole('tab', { name: 'Diff' }).click();
    await panel.getByRole('button', { name: 'Side by side' }).click({ timeout: 120_000 });
    const fit = await page.evaluate(() => {
      const body = document.querySelector('#panel-body');
      const pr = document.querySelector('[data-testid=resource-panel]').getBoundingClientRect();
      const cols = [...document.querySelectorAll('.diff-split > div')].map((c) => c.getBoundingClientRect());
      return { scroll: body.scrollWidth, client: body.clientWidth, cols: cols.map((c) => [c.left, c.right]), panel: [pr.left, pr.right] };
    });
    assert(fit.cols.length === 2, `${fit.cols.length} columns`);
    assert(fit.scroll <= fit.client, `the panel scrolls sideways: ${fit.scroll} > ${fit.client}`);
    for (const [l, r] of fit.cols) assert(l >= fit.panel[0] && r <= fit.panel[1], `a column at ${l}–${r} outside the panel ${fit.panel}`);
    await shot('views-diff-split');
    const lines = () => panel.locator('.diff-split .manifest').first().evaluate((p) => p.innerText.split('\n').length);
    const full = await lines();
    await panel.getByLabel('Compact diff').check();
    const compact = await lines();
    assert(compact < full, `compact ${compact} lines, full ${full}`);
    await page.getByRole('button', { name: 'Close panel' }).click();
  });

  await check('a nonexistent Application says it is not found or not visible', async () => {
    await page.goto(`${base}/applications/${appNs}/${appName}-nope`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    assert(/not found/i.test(text), text);
  });

  // Creation.
  const post = (body, query = '') =>
    page.evaluate(
      async ([b, q]) => {
        const r = await fetch(`/api/v1/applications${q}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(b) });
        return { status: r.status, body: await r.text() };
      },
      [body, query],
    );
  const appBody = (name, repo, project = 'default', ns = destNs) => ({
    metadata: { name },
    spec: { project, source: { repoURL: repo, path: 'k8s', targetRevision: 'main' }, destination: { server: 'https://kubernetes.default.svc', namespace: ns } },
  });
  const unreachable = 'https://127.0.0.1:9/nowhere.git';
  await check('REST: an unreachable repository is refused at create, unless validate=false', async () => {
    const r = await post(appBody('ui-views-unreachable', unreachable));
    assert(r.status === 400 && /application spec for ui-views-unreachable is invalid: InvalidSpecError: repository not accessible/.test(r.body), `${r.status} ${r.body}`);
    // Hostile: credentials in the URL never come back in the refusal.
    const secret = await post(appBody('ui-views-unreachable', 'https://robot:s3cr3t-t0ken@127.0.0.1:9/nowhere.git'));
    assert(secret.status === 400 && !secret.body.includes('s3cr3t-t0ken'), `${secret.status} ${secret.body}`);
    const skip = await post(appBody('ui-views-skipped', unreachable), '?validate=false');
    assert(skip.status === 200, `validate=false: ${skip.status} ${skip.body}`);
  });
  await check('an Application whose repository does not answer says why once', async () => {
    const compared = page.waitForResponse((r) => r.url().includes('/ui-views-skipped/managed-resources'), { timeout: 120_000 });
    await page.goto(`${base}/applications/${appNs}/ui-views-skipped`);
    await page.locator('.conditions li').first().waitFor({ timeout: 120_000 });
    await compared;
    await page.getByText('objects', { exact: false }).first().waitFor();
    // The condition's message (after its type) stands once on the page, not again as a notice
    // or a message elsewhere.
    const { cond, text } = await page.evaluate(() => ({
      cond: document.querySelector('.conditions li')?.innerText || '',
      text: document.querySelector('main')?.innerText || '',
    }));
    const said = cond.replace(/^\w+:\s*/, '').slice(0, 60);
    const times = text.split(said).length - 1;
    assert(said.length >= 20 && times === 1, `"${said}" is shown ${times} times: ${text.slice(0, 2500).replace(/\n/g, ' ⏎ ')}`);
  });
  await page.evaluate(async () => fetch('/api/v1/applications/ui-views-skipped?cascade=false', { method: 'DELETE' }));

  const form = async (name, repo, project, ns) => {
    await page.goto(`${base}/applications`);
    await page.getByRole('button', { name: '+ New application' }).click();
    const f = page.getByTestId('app-form');
    await f.locator('input[name=name]').fill(name);
    await f.locator('input[name=project]').fill(project);
    await f.locator('input[name=repoURL]').fill(repo);
    await f.locator('input[name=path]').fill('k8s');
    await f.locator('input[name=destNamespace]').fill(ns);
    const server = f.locator('input[name=destServer]');
    if (await server.count()) await server.fill('https://kubernetes.default.svc');
    await f.getByRole('button', { name: 'Create' }).click();
    return f;
  };
  const once = async (f, field, re) => {
    const e = f.getByTestId(`error-${field}`);
    await e.waitFor({ timeout: 60_000 });
    const text = await e.innerText();
    assert(re.test(text), `under ${field}: ${text}`);
    const count = await page.evaluate((t) => document.body.innerText.split(t).length - 1, text.slice(0, 60));
    assert(count === 1, `the refusal is shown ${count} times`);
  };
  await check('the form: an unreachable repository is refused once, under Repository URL', async () => {
    const f = await form('ui-views-unreachable', unreachable, 'default', destNs);
    await once(f, 'repoURL', /repository not accessible/);
  });
  await check('the form: a repository the project does not permit is refused under Repository URL', async () => {
    const f = await form('ui-views-narrow-repo', otherRepo, narrow, destNs);
    await once(f, 'repoURL', /not permitted in project/);
  });
  await check('the form: a destination the project does not permit is refused under the destination', async () => {
    const f = await form('ui-views-narrow-dest', repoUrl, narrow, `${destNs}-other`);
    const e = f.locator('[data-testid=error-destination], [data-testid=error-namespace]');
    await e.first().waitFor({ timeout: 60_000 });
    assert(/do not match any of the allowed destinations/.test(await e.first().innerText()), await e.first().innerText());
    assert((await f.getByTestId('error-project').count()) === 0, 'also under Project');
  });
  await check('a YAML error keeps its line breaks and names the line and column', async () => {
    await page.goto(`${base}/applications`);
    await page.getByRole('button', { name: '+ New application' }).click();
    const f = page.getByTestId('app-form');
    await f.getByRole('button', { name: 'YAML' }).click();
    const editor = page.getByTestId('yaml-editor').locator('.cm-content');
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('metadata:\n  name: x\nspec:\n  project: [default\n');
    await f.getByRole('button', { name: 'Create' }).click();
    const e = page.getByTestId('yaml-error');
    await e.waitFor();
    const text = await e.innerText();
    assert(text.split('\n').length >= 3, `on one line: ${text}`);
    assert(/line \d+, column \d+/i.test(text), `no line and column: ${text}`);
  });

  assert(failed.length === 0, `${failed.length} checks failed: ${failed.join('; ')}`);
});
void context;
