// What the settings browser scripts share: the browser, the page, steps, assertions, and the
// helpers that find a field's error and wait for focus and paths.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const shots = process.env.PLUMB_SCREENSHOTS || '';
const failDir = process.env.PLUMB_FAILURE_DIR || '/tmp';

export const browser = await chromium.launch({
  executablePath: process.env.PLUMB_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
export const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1440, height: 900 } });
context.setDefaultTimeout(30_000);
export const page = await context.newPage();
export const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));
page.on('console', (m) => m.type() === 'error' && console.log(`console: ${m.text()}`));

let current = '';
export async function step(name, f) {
  current = name;
  const t = Date.now();
  await f();
  console.log(`ok - ${name} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
}
export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
export async function shot(name) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.waitForTimeout(300); // let the page settle for the picture; not an assertion
  await page.screenshot({ path: join(shots, `${name}.png`) });
}
/** An API answer read with the page's session cookie. */
export const api = (path) =>
  page.evaluate(async (p) => {
    const r = await fetch(p);
    return r.ok ? r.json() : { status: r.status, body: await r.text() };
  }, path);
export const dialog = () => page.getByRole('dialog');
/** Focus moves after the next render: wait for it (bounded by the default timeout). */
export const focusOn = (id) => page.waitForFunction((i) => document.activeElement?.id === i, id);
/** The error shown next to field `name`, and that the field says it is invalid. */
export async function fieldError(name, re) {
  const e = page.getByTestId(`error-${name}`);
  await e.waitFor();
  const text = await e.innerText();
  assert(re.test(text), `error next to ${name}: ${text}`);
  const invalid = await page.locator(`[id="f-${name}"]`).getAttribute('aria-invalid');
  assert(invalid === 'true', `${name} is marked invalid (aria-invalid=${invalid})`);
  return text;
}
/** In-app navigation changes the URL without a page load: wait for the path itself. */
export const atPath = (path) => page.waitForFunction((p) => location.pathname === p, path);
export const nav = (name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();


/** Logs in as admin from a settings page, which sends to the login page first. */
export async function login(path, password) {
  await page.goto(`${process.env.PLUMB_UI_URL}${path}`);
  await page.waitForURL(/\/login\?return_url=/);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(password);
  await page.keyboard.press('Enter');
  await atPath(path);
}

/** Runs the steps; prints PASS, or what failed with the page's text and a screenshot. */
export async function run(name, steps) {
  try {
    await steps();
    assert(consoleErrors.length === 0, `uncaught errors in the page: ${consoleErrors.join('\n')}`);
    console.log('PASS');
  } catch (e) {
    console.log(`not ok - ${current}: ${e.message}`);
    for (const err of consoleErrors) console.log(`page error: ${err}`);
    const text = await Promise.race([
      page.evaluate(() => (document.querySelector('[role=dialog]')?.innerText || document.querySelector('main')?.innerText || '').slice(0, 2000)).catch((x) => `(${x.message})`),
      new Promise((r) => setTimeout(() => r('(the page does not answer)'), 5000)),
    ]);
    console.log(`page text: ${text}`);
    try {
      mkdirSync(failDir, { recursive: true });
      const path = join(failDir, `plumb-ui-${name}-failure.png`);
      await page.screenshot({ path, fullPage: true });
      console.log(`screenshot of the failure: ${path}`);
    } catch {
      /* the page may be gone */
    }
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}
