// The settings pages in a real browser (Debian's Chromium through playwright-core), against a
// real `plumb server` with authentication on the test control plane. Started by
// crates/plumb-server/tests/ui (`browser_settings_pages`), which checks afterwards what the
// pages saved, in the AppProject itself.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_PROJECT (the project the page creates),
// PLUMB_DEST_NAMESPACE (its destination), PLUMB_API_ACCOUNT (an account with the apiKey
// capability), PLUMB_CHROMIUM, PLUMB_SCREENSHOTS, PLUMB_FAILURE_DIR.
import { api, assert, atPath, dialog, fieldError, focusOn, login, nav, page, run, shot, step } from './settings-lib.mjs';

const base = process.env.PLUMB_UI_URL;
const adminPw = process.env.PLUMB_ADMIN_PASSWORD;
const project = process.env.PLUMB_PROJECT || 'ui-settings-project';
const destNs = process.env.PLUMB_DEST_NAMESPACE || 'ui-settings-dest';
const apiAccount = process.env.PLUMB_API_ACCOUNT || 'ci';
const IN_CLUSTER = 'https://kubernetes.default.svc';

if (!base || !adminPw) {
  console.error('settings.mjs: PLUMB_UI_URL and PLUMB_ADMIN_PASSWORD are required');
  process.exit(2);
}

await run('settings', async () => {
  await step('a settings page without a session logs in and comes back', async () => {
    await login('/settings', adminPw);
    for (const s of ['Repositories', 'Repository certificates and known hosts', 'GnuPG keys', 'Clusters', 'Projects', 'Accounts'])
      await page.getByRole('main').getByRole('link', { name: s, exact: true }).waitFor();
    await shot('settings');
  });

  await step('user info; a wrong current password is shown next to its field', async () => {
    await nav('User info');
    await page.getByTestId('userinfo').getByText('admin').waitFor();
    await page.getByRole('button', { name: 'Update password' }).click();
    await dialog().waitFor();
    await focusOn('f-currentPassword');
    await page.keyboard.type('not-the-password');
    await page.getByLabel('New password', { exact: true }).fill('a-new-password-1');
    await page.getByLabel('Confirm the new password').fill('a-new-password-2');
    await page.keyboard.press('Enter');
    await fieldError('confirmPassword', /differ/);
    await page.getByLabel('Confirm the new password').fill('a-new-password-1');
    await page.keyboard.press('Enter');
    // The server's own message (Argo's), next to the field it is about.
    await fieldError('currentPassword', /current password does not match/);
    await focusOn('f-currentPassword'); // the refused field
    await shot('password-error');
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
  });

  await step('new project: a bad name is refused next to the field, then the project is created', async () => {
    await nav('Settings');
    await page.getByRole('main').getByRole('link', { name: 'Projects', exact: true }).click();
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill('Not_A_Name');
    await page.keyboard.press('Enter');
    await fieldError('name', /Lower-case/);
    await page.getByLabel('Project name').fill(project);
    await page.getByLabel('Description (optional)').fill('made by the settings test');
    await page.keyboard.press('Enter');
    await atPath(`/settings/projects/${project}`);
    await page.getByTestId('description').getByText('made by the settings test').waitFor();
  });

  await step('add a project destination: a row with neither server nor name is refused next to it', async () => {
    await page.getByRole('button', { name: 'Edit destinations' }).click();
    await page.getByRole('button', { name: 'Add row' }).click();
    await focusOn('f-rows.0.server');
    await page.locator('[id="f-rows.0.namespace"]').fill(destNs);
    await page.keyboard.press('Enter');
    await fieldError('rows.0.server', /server or a cluster name/);
    await page.locator('[id="f-rows.0.server"]').fill(IN_CLUSTER);
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'detached' });
    const dd = page.locator('dd[data-field="Destinations"]');
    await dd.getByText(`${IN_CLUSTER} → ${destNs}`).waitFor();
    const p = await api(`/api/v1/projects/${project}`);
    const d = p.spec.destinations || [];
    assert(d.length === 1 && d[0].server === IN_CLUSTER && d[0].namespace === destNs && !('name' in d[0]), `saved destinations: ${JSON.stringify(d)}`);
  });

  await step('source repositories, and an empty namespace resource list told apart from an unset one', async () => {
    await page.getByRole('button', { name: 'Edit source repositories' }).click();
    await page.getByRole('button', { name: 'Add repository url' }).click();
    await focusOn('f-rows.0.value');
    await page.keyboard.type('*');
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await page.locator('dd[data-field="Source repositories"]').getByText('*', { exact: true }).waitFor();
    const allowed = page.locator('dd[data-field="Namespace resources allowed"]');
    assert(/^all namespaced kinds/.test(await allowed.innerText()), 'unset: all kinds');
    await page.getByRole('button', { name: 'Edit namespace resources allowed' }).click();
    await page.getByLabel(/Keep an empty list/).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'detached' });
    await allowed.getByText(/^none: the list is empty/).waitFor();
  });

  await step('a role with a policy; its token is shown once, listed, then deleted', async () => {
    await page.getByRole('button', { name: 'Add role' }).click();
    await page.getByLabel('Role name').fill('deployer');
    await page.getByLabel('Policies, one a line').fill(`p, proj:${project}:deployer, applications, sync, other/*, allow`);
    await page.getByRole('button', { name: 'Save' }).click();
    await fieldError('policies', /must start with/);
    await page.getByLabel('Policies, one a line').fill(`p, proj:${project}:deployer, applications, sync, ${project}/*, allow`);
    await page.getByLabel('Groups, one a line (optional)').fill('platform-team');
    await page.getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'detached' });
    const role = page.locator('[data-role=deployer]');
    await role.getByText(`p, proj:${project}:deployer, applications, sync, ${project}/*, allow`).waitFor();
    await role.getByRole('button', { name: 'Generate token' }).click();
    await page.getByLabel('Token ID (optional)').fill('deploy-bot');
    await page.keyboard.press('Enter');
    const token = await page.getByTestId('new-token').inputValue();
    assert(token.split('.').length === 3, `a JWT is shown once: ${token.slice(0, 12)}…`);
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    await role.locator('[data-token=deploy-bot]').waitFor();
    assert(!(await page.content()).includes(token), 'the token is not on the page once its dialog is closed');
    await shot('project');
    await role.getByRole('button', { name: 'Delete token deploy-bot' }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await role.locator('[data-token=deploy-bot]').waitFor({ state: 'detached' });
  });

  await step('sync windows: a bad duration is refused next to it; add, update, delete', async () => {
    const windows = page.getByTestId('sync-windows');
    await windows.getByRole('button', { name: 'Add sync window' }).click();
    // Every minute for an hour: open now, whenever the test runs.
    await page.getByLabel('Schedule (cron)').fill('* * * * *');
    await page.getByLabel('Duration').fill('soon');
    await page.getByLabel('Applications (comma-separated)').fill('*');
    await page.keyboard.press('Enter');
    await fieldError('duration', /duration such as/);
    await page.getByLabel('Duration').fill('1h');
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await windows.getByText('allow * * * * * for 1h apps *').waitFor();
    // GetSyncWindowsState says the window is open now.
    await windows.locator('[data-window="0"] [data-testid=window-active]').waitFor();
    await windows.getByRole('button', { name: 'Edit sync window 1' }).click();
    await page.getByLabel('Kind').selectOption('deny');
    await page.getByLabel('Allow manual syncs during the window').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await windows.getByText('deny * * * * * for 1h apps * (manual sync allowed)').waitFor();
    await windows.getByRole('button', { name: 'Add sync window' }).click();
    await page.getByLabel('Schedule (cron)').fill('0 6 * * 1-5');
    await page.getByLabel('Duration').fill('30m');
    await page.getByLabel('Namespaces (comma-separated)').fill(destNs);
    await page.keyboard.press('Enter');
    await windows.getByText(`allow 0 6 * * 1-5 for 30m namespaces ${destNs}`).waitFor();
    await windows.getByRole('button', { name: 'Delete sync window 1' }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await dialog().waitFor({ state: 'detached' });
    await windows.locator('code', { hasText: 'deny * * * * *' }).waitFor({ state: 'detached' });
  });

  await step('general: a bad label refused next to the field; labels and scoped clusters only saved', async () => {
    await page.getByRole('button', { name: 'Edit general' }).click();
    await focusOn('f-description');
    await page.getByLabel('Labels (optional)').fill('team=has space');
    await page.getByLabel('Description').press('Enter');
    await fieldError('labels', /not a label value/);
    await page.getByLabel('Labels (optional)').fill('team=payments');
    await page.getByLabel(/Permit only clusters of this project/).check();
    await page.getByLabel('Description').press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await page.locator('dd[data-field="Labels"]').getByText('team=payments').waitFor();
    await page.locator('dd[data-field="Scoped clusters only"]').getByText('only clusters of this project').waitFor();
    await page.getByTestId('description').getByText('made by the settings test').waitFor();
  });

  await step('orphaned resources: monitored with a warning; scoped clusters and source integrity shown', async () => {
    const monitoring = page.getByTestId('monitoring');
    await monitoring.getByText('Not monitored.').waitFor();
    await page.getByRole('button', { name: 'Edit orphaned resources monitoring' }).click();
    await page.getByLabel(/^Monitor orphaned resources/).check();
    await page.getByLabel(/^Warn/).check();
    await dialog().getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'detached' });
    await monitoring.getByText(/^Monitored, with a warning condition/).waitFor();
    await page.locator('dd[data-field="Scoped clusters"]').getByText(/^none/).waitFor();
    await page.getByTestId('source-integrity').getByText(/^No source integrity policy/).waitFor();
    const p = await api(`/api/v1/projects/${project}`);
    assert(p.spec.orphanedResources?.warn === true && p.metadata.labels?.team === 'payments', `saved: ${JSON.stringify({ o: p.spec.orphanedResources, l: p.metadata.labels })}`);
  });

  await step('accounts: a token of an API account is shown once, listed, then deleted', async () => {
    await nav('Settings');
    await page.getByRole('main').getByRole('link', { name: 'Accounts', exact: true }).click();
    await page.getByTestId('accounts').locator('[data-account=admin]').waitFor();
    await page.getByRole('link', { name: apiAccount, exact: true }).click();
    await page.getByRole('button', { name: 'Generate token' }).click();
    await page.getByLabel('Expires in (optional)').fill('tomorrow');
    await page.keyboard.press('Enter');
    await fieldError('expiresIn', /duration such as/);
    await page.getByLabel('Expires in (optional)').fill('1d');
    await page.getByLabel('Token ID (optional)').fill('ci-token');
    await page.keyboard.press('Enter');
    const token = await page.getByTestId('new-token').inputValue();
    assert(token.split('.').length === 3, 'a JWT is shown once');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator('[data-token=ci-token]').waitFor();
    assert(!(await page.content()).includes(token), 'the token is not on the page once its dialog is closed');
    const acc = await api(`/api/v1/account/${apiAccount}`);
    assert((acc.tokens || []).some((t) => t.id === 'ci-token'), `the account lists the token: ${JSON.stringify(acc)}`);
    await page.getByRole('button', { name: 'Delete token ci-token' }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await page.locator('[data-token=ci-token]').waitFor({ state: 'detached' });
  });

});
