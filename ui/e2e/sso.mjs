// Single sign-on in a real browser through the real Dex's login page, against a real `plumb
// server` whose argocd-cm has `dex.config` (a mockCallback connector named Example and Dex's
// password database: alice in ui-sso-devs, which RBAC makes admin; bob in ui-sso-outsiders,
// which has no role). Started by crates/plumb-server/tests/ui (`browser_sso_login_through_dex`),
// which starts Dex when this script prints `STEP start-dex` and answers `done`.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_APP, PLUMB_CHROMIUM, PLUMB_SCREENSHOTS,
// PLUMB_FAILURE_DIR.
import { createInterface } from 'node:readline';
import { api, assert, context, nav, page, run, shot, step } from './settings-lib.mjs';

const base = process.env.PLUMB_UI_URL;
const adminPw = process.env.PLUMB_ADMIN_PASSWORD;
const app = process.env.PLUMB_APP || 'ui-sso-app';
if (!base || !adminPw) {
  console.error('sso.mjs: PLUMB_UI_URL and PLUMB_ADMIN_PASSWORD are required');
  process.exit(2);
}
const stdin = createInterface({ input: process.stdin });
const lines = stdin[Symbol.asyncIterator]();
async function ask(name) {
  console.log(`STEP ${name}`);
  const { value } = await lines.next();
  assert(value === 'done', `the test answered ${value} to ${name}`);
}

const ssoLink = () => page.getByRole('link', { name: 'Log in via Example' });

/** From the SSO button through Dex's own pages (its connector list, then its password form). */
async function throughDex(email) {
  await page.waitForURL((u) => u.pathname.startsWith('/api/dex/'));
  await page.getByText('Log in with Email').click();
  await page.locator('#login').fill(email);
  await page.locator('#password').fill('password');
  await page.locator('#submit-login').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/api/dex/') && !u.pathname.startsWith('/auth/'));
}

await run('sso', async () => {
  await step('the login page says why SSO is unavailable while Dex is down', async () => {
    await page.goto(`${base}/applications`);
    await page.waitForURL(/\/login\?return_url=/);
    const why = page.getByTestId('sso-unavailable');
    await why.waitFor();
    assert(/unavailable/.test(await why.innerText()), `reason: ${await why.innerText()}`);
    assert(await page.getByRole('button', { name: 'Log in via Example' }).isDisabled(), 'the SSO button is disabled');
    await shot('login-sso-unavailable');
  });

  await ask('start-dex');

  await step('with Dex up, the login page offers "Log in via Example"', async () => {
    // The server remembers a failed discovery for 10 s: reload until it asks again (bounded).
    for (let i = 0; i < 60 && !(await ssoLink().isVisible()); i++) {
      await page.waitForTimeout(1000);
      await page.reload();
      await page.getByTestId('sso').waitFor();
    }
    await ssoLink().waitFor();
    const href = await ssoLink().getAttribute('href');
    assert(href === `/auth/login?return_url=${encodeURIComponent('/applications')}`, `href ${href}`);
    await shot('login-sso');
  });

  await step("alice logs in on Dex's page and lands on the Applications, logged in", async () => {
    await ssoLink().click();
    await throughDex('alice@example.com');
    assert(new URL(page.url()).pathname === '/applications', `landed on ${page.url()}`);
    await page.locator(`[data-app="${app}"]`).first().waitFor();
    await page.getByTestId('whoami').waitFor();
  });

  await step('the user info page shows her groups and the issuer', async () => {
    await nav('User info');
    const info = page.getByTestId('userinfo');
    await info.waitFor();
    const text = await info.innerText();
    for (const want of ['ui-sso-devs', 'ui-sso-all', `${base}/api/dex`]) assert(text.includes(want), `${want} in ${text}`);
    await shot('user-info-sso');
  });

  const filtered = '/applications?search=ui-sso&view=list';
  const sessionDialog = () => page.getByRole('dialog', { name: 'Your session has ended' });
  await step('the session ends under a filtered page: a dialog over it, the page kept', async () => {
    await page.goto(`${base}${filtered}`);
    await page.locator(`[data-testid="app-row"][data-app="${app}"]`).waitFor();
    // The page asked what RBAC allows (the button is enabled) before the session ends.
    const newApp = page.locator('button:has-text("+ New application"):enabled');
    await newApp.waitFor();
    await context.clearCookies();
    await newApp.click();
    await sessionDialog().waitFor();
    assert(new URL(page.url()).pathname + new URL(page.url()).search === filtered, `still at ${page.url()}`);
    const href = await sessionDialog().getByRole('link', { name: 'Log in via Example' }).getAttribute('href');
    assert(href === `/auth/login?return_url=${encodeURIComponent(filtered)}`, `href ${href}`);
    await shot('session-ended');
  });

  await step('a local login in the dialog carries on with the open form', async () => {
    await sessionDialog().getByLabel('Username').fill('admin');
    await sessionDialog().getByLabel('Password').fill(adminPw);
    await sessionDialog().getByRole('button', { name: 'Sign in' }).click();
    await sessionDialog().waitFor({ state: 'detached' });
    await page.getByRole('dialog', { name: 'New application' }).waitFor();
    assert((await page.getByLabel('Search applications').inputValue()) === 'ui-sso', 'the search is kept');
    const me = await api('/api/v1/session/userinfo');
    assert(me.loggedIn === true && me.username === 'admin', `userinfo ${JSON.stringify(me)}`);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  await step('an SSO login from the dialog comes back to the same filtered page', async () => {
    await context.clearCookies();
    await page.getByRole('button', { name: '+ New application' }).click();
    await sessionDialog().getByRole('link', { name: 'Log in via Example' }).click();
    await throughDex('alice@example.com');
    const u = new URL(page.url());
    assert(u.pathname + u.search === filtered, `came back to ${page.url()}`);
    await page.locator(`[data-testid="app-row"][data-app="${app}"]`).waitFor();
    assert((await page.getByLabel('Search applications').inputValue()) === 'ui-sso', 'the search is kept');
    const me = await api('/api/v1/session/userinfo');
    assert(me.iss === `${base}/api/dex`, `userinfo ${JSON.stringify(me)}`);
  });

  await step('the denied group sees no Applications, as in Argo', async () => {
    await context.clearCookies();
    await page.goto(`${base}/applications`);
    await page.waitForURL(/\/login\?return_url=/);
    await ssoLink().click();
    await throughDex('bob@example.com');
    await page.getByRole('heading', { name: 'No applications yet' }).waitFor();
    assert((await page.locator(`[data-app="${app}"]`).count()) === 0, 'no tile for the denied user');
    const list = await api('/api/v1/applications');
    assert(Array.isArray(list.items ?? []) && (list.items ?? []).length === 0, `the API lists ${JSON.stringify(list).slice(0, 300)}`);
    const one = await api(`/api/v1/applications/${app}`);
    assert(one.status === 403 || one.status === 404, `GET the app: ${JSON.stringify(one).slice(0, 300)}`);
    await nav('User info');
    const text = await page.getByTestId('userinfo').innerText();
    assert(text.includes('ui-sso-outsiders'), `groups in ${text}`);
    await shot('sso-denied');
  });
});
stdin.close();
