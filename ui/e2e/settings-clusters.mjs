// The Clusters pages in a real browser, against a real `plumb server`: a second cluster (the
// test control plane again, reached with a real ServiceAccount token) connected through the
// form, a wrong token refused next to its field, the cluster listed with its connection state,
// renamed on its page, connected again (refused without upsert, replaced with it), then
// removed. Started by crates/plumb-server/tests/ui (`browser_settings_clusters`), which checks
// afterwards that no cluster Secret is left.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_CLUSTER_SERVER (the API server's URL),
// PLUMB_CLUSTER_CA (its CA, PEM), PLUMB_CLUSTER_TOKEN (a token of a ServiceAccount there),
// PLUMB_CHROMIUM, PLUMB_SCREENSHOTS, PLUMB_FAILURE_DIR.
import { api, assert, atPath, dialog, fieldError, focusOn, login, page, run, shot, step } from './settings-lib.mjs';

const env = (k) => {
  const v = process.env[k];
  if (!v) {
    console.error(`settings-clusters.mjs: ${k} is required`);
    process.exit(2);
  }
  return v;
};
const base = env('PLUMB_UI_URL');
const adminPw = env('PLUMB_ADMIN_PASSWORD');
const server = env('PLUMB_CLUSTER_SERVER');
const ca = env('PLUMB_CLUSTER_CA');
const token = env('PLUMB_CLUSTER_TOKEN');
const WRONG = 'not-a-token-of-this-cluster-4f1c';
const IN_CLUSTER = 'https://kubernetes.default.svc';
const row = () => page.locator(`[data-testid=clusters] tr[data-server="${server}"]`);

await run('settings-clusters', async () => {
  await step('the Clusters page lists the in-cluster destination; Connect cluster opens from the keyboard', async () => {
    await login('/settings/clusters', adminPw);
    await page.locator(`[data-testid=clusters] tr[data-server="${IN_CLUSTER}"]`).waitFor();
    await page.getByRole('button', { name: 'Connect cluster' }).focus();
    await page.keyboard.press('Enter');
    await dialog().waitFor();
    await focusOn('f-name');
    await page.keyboard.type('ui-second');
    await page.keyboard.press('Tab');
    await focusOn('f-server');
    await page.keyboard.type(server);
    // No token yet: refused in place before any request, the focus on the token field.
    await page.keyboard.press('Enter');
    await fieldError('bearerToken', /bearer token is required/);
    await focusOn('f-bearerToken');
  });

  await step('a wrong token is refused by the server next to the token field, without the token', async () => {
    await page.keyboard.type(WRONG);
    await page.getByLabel('CA certificate (PEM, optional)').fill(ca);
    await page.getByLabel('Labels (optional)').fill('env=has space');
    await page.getByLabel('Bearer token').press('Enter');
    await fieldError('labels', /not a label value/);
    await page.getByLabel('Labels (optional)').fill('env=ui-test');
    await page.getByLabel('Bearer token').press('Enter');
    const msg = await fieldError('bearerToken', /unauthori[sz]ed|401/i);
    assert(!msg.includes(WRONG), `the refusal does not repeat the token: ${msg}`);
    const listed = await api('/api/v1/clusters');
    assert(!listed.items.some((c) => c.server === server), 'nothing was saved');
    await shot('cluster-error');
  });

  await step('the right token: connected, listed with a Successful connection, the token nowhere on the page', async () => {
    await page.getByLabel('Bearer token').fill(token);
    await page.getByLabel('Bearer token').press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await row().locator('[data-testid=connection][data-status=Successful]').waitFor();
    await row().getByRole('link', { name: 'ui-second', exact: true }).waitFor();
    assert(!(await page.content()).includes(token), 'the token is not on the page');
    const listed = await api('/api/v1/clusters');
    const c = listed.items.find((x) => x.server === server);
    assert(c && c.name === 'ui-second' && c.labels?.env === 'ui-test', `the API lists it: ${JSON.stringify(c)}`);
    assert(!JSON.stringify(listed).includes(token), 'the API answer holds no token');
    await shot('clusters');
  });

  await step('its page: renamed through the edit panel, the credentials kept', async () => {
    await row().getByRole('link', { name: 'ui-second', exact: true }).click();
    await atPath(`/settings/clusters/${encodeURIComponent(server)}`);
    await page.getByTestId('cluster-details').locator('[data-testid=connection][data-status=Successful]').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await dialog().waitFor();
    await focusOn('f-name');
    assert((await page.getByLabel('Labels (optional)').inputValue()) === 'env=ui-test', 'the form holds the labels');
    assert(!(await page.content()).includes(token), 'the edit form holds no token');
    await page.getByLabel('Name', { exact: true }).fill('');
    await page.keyboard.press('Enter');
    await fieldError('name', /name is required/);
    await page.getByLabel('Name', { exact: true }).fill('ui-second-renamed');
    await page.getByLabel('Namespaces (optional, comma-separated)').fill('Not A Namespace');
    await page.getByLabel('Name', { exact: true }).press('Enter');
    await fieldError('namespaces', /not a namespace name/);
    await page.getByLabel('Namespaces (optional, comma-separated)').fill('');
    await page.getByLabel('Name', { exact: true }).press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await page.locator('dd[data-field=name]').getByText('ui-second-renamed', { exact: true }).waitFor();
    const c = await api(`/api/v1/clusters/${encodeURIComponent(server)}`);
    assert(c.name === 'ui-second-renamed' && c.labels?.env === 'ui-test', `saved: ${JSON.stringify(c)}`);
    assert(c.connectionState?.status === 'Successful', `the stored token still connects: ${JSON.stringify(c.connectionState)}`);
    await shot('cluster');
  });

  await step('connected again: refused beside upsert while it differs, replaced with upsert', async () => {
    await page.goto(`${base}/settings/clusters`);
    await row().getByRole('link', { name: 'ui-second-renamed', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Connect cluster' }).click();
    await focusOn('f-name');
    await page.keyboard.type('ui-second-again');
    await page.getByLabel('API server URL').fill(server);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByLabel('CA certificate (PEM, optional)').fill(ca);
    await page.getByLabel('Bearer token').press('Enter');
    await fieldError('upsert', /use upsert flag/);
    await page.getByLabel(/upsert/).check();
    await page.getByLabel('Bearer token').press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await row().getByRole('link', { name: 'ui-second-again', exact: true }).waitFor();
    await row().locator('[data-testid=connection][data-status=Successful]').waitFor();
  });

  await step('removed from the list', async () => {
    await page.getByRole('button', { name: 'Delete ui-second-again' }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await row().waitFor({ state: 'detached' });
    const listed = await api('/api/v1/clusters');
    assert(!listed.items.some((c) => c.server === server), `gone from the API: ${JSON.stringify(listed)}`);
  });
});
