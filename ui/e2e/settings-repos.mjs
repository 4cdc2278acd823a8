// The repository, certificate and GnuPG key pages in a real browser, against a real `plumb
// server` and a real Git server with Basic authentication. Started by
// crates/plumb-server/tests/ui (`browser_settings_repositories_certificates_gpg`), which checks
// afterwards the Secrets and ConfigMaps the pages wrote.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_GIT_URL, PLUMB_GIT_USER and
// PLUMB_GIT_PASSWORD (the Git server and its account), PLUMB_GPG_KEY (an ASCII-armored public
// key) and PLUMB_GPG_KEY_ID, PLUMB_TLS_CERT (a PEM certificate of git.example.com),
// PLUMB_CHROMIUM, PLUMB_SCREENSHOTS, PLUMB_FAILURE_DIR.
import { api, assert, dialog, fieldError, page, run, shot, step, login } from './settings-lib.mjs';

const env = (k) => {
  const v = process.env[k];
  if (!v) {
    console.error(`settings-repos.mjs: ${k} is required`);
    process.exit(2);
  }
  return v;
};
const adminPw = env('PLUMB_ADMIN_PASSWORD');
const gitUrl = env('PLUMB_GIT_URL');
const gitUser = env('PLUMB_GIT_USER');
const gitPassword = env('PLUMB_GIT_PASSWORD');
const gpgKey = env('PLUMB_GPG_KEY');
const gpgKeyId = env('PLUMB_GPG_KEY_ID');
const tlsCert = env('PLUMB_TLS_CERT');
// A repository Secret written by hand whose URL is a `javascript:` URL (GHSA-2hj5-g64g-fp6p).
const hostileUrl = env('PLUMB_HOSTILE_URL');
// A real host key line (GitHub's published Ed25519 key).
const KNOWN_HOST = 'github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

await run('settings-repos', async () => {
  await step('connect a repository: the wrong password is refused next to its field, with the check\'s message', async () => {
    await login('/settings/repos', adminPw);
    // Argo's advisory GHSA-2hj5-g64g-fp6p: the repositories page made a `javascript:` repository
    // URL a link. Here the URL is listed as text and no link on the page runs script.
    await page.locator(`[data-testid=repositories] tr[data-url="${hostileUrl}"]`).waitFor();
    const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => a.getAttribute('href')));
    assert(hrefs.every((h) => !/^\s*javascript:/i.test(h)), `a link runs script: ${JSON.stringify(hrefs)}`);
    await page.getByRole('button', { name: 'Connect repository' }).click();
    // The form's own check first: an HTTPS URL with the SSH method.
    await page.getByLabel('Connection method').selectOption('ssh');
    await page.getByLabel('Repository URL').fill(gitUrl);
    await page.getByLabel('SSH private key').fill('-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await fieldError('url', /SSH repository URL/);
    await page.getByLabel('Connection method').selectOption('https');
    await page.getByLabel('Username (optional)').fill(gitUser);
    await page.getByLabel('Password (optional)', { exact: true }).fill('not-the-password');
    await page.getByLabel('Username (optional)').press('Enter');
    // The server checks the connection before it saves: its refusal is shown by the password.
    const msg = await fieldError('password', /connectivity|authentic|401/i);
    assert(!msg.includes('not-the-password'), `the refusal does not repeat the password: ${msg}`);
    await shot('repo-error');
  });

  await step('connect it with the right password: listed with a Successful connection, no password on the page', async () => {
    await page.getByLabel('Password (optional)', { exact: true }).fill(gitPassword);
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'detached' });
    const row = page.locator(`[data-testid=repositories] tr[data-url="${gitUrl}"]`);
    await row.locator('[data-testid=connection][data-status=Successful]').waitFor();
    assert(!(await page.content()).includes(gitPassword), 'the password is not on the page');
    const listed = await api('/api/v1/repositories');
    assert(listed.items.some((r) => r.repo === gitUrl && r.connectionState?.status === 'Successful'), `the API lists it: ${JSON.stringify(listed)}`);
    await shot('repositories');
  });

  await step('a credential template is added, then the repository is deleted', async () => {
    const prefix = gitUrl.replace(/[^/]+$/, '');
    await page.getByRole('button', { name: 'Add credential template' }).click();
    await page.getByLabel('URL prefix').fill(prefix);
    await page.getByLabel('Username (optional)').fill(gitUser);
    await page.getByLabel('Password (optional)', { exact: true }).fill(gitPassword);
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await page.locator(`[data-testid=repocreds] tr[data-url="${prefix}"]`).waitFor();
    await page.getByRole('button', { name: `Delete ${gitUrl}` }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await page.locator(`[data-testid=repositories] tr[data-url="${gitUrl}"]`).waitFor({ state: 'detached' });
  });

  await step('certificates: a line that is not a known host is refused next to the field; SSH and TLS added, one deleted', async () => {
    await page.goto(`${process.env.PLUMB_UI_URL}/settings/certs`);
    await page.getByRole('button', { name: 'Add SSH known hosts' }).click();
    await page.getByLabel('SSH known hosts entries').fill('github.com is a host');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await fieldError('knownHosts', /not a known-hosts entry/);
    await page.getByLabel('SSH known hosts entries').fill(`# GitHub\n${KNOWN_HOST}\n`);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await dialog().waitFor({ state: 'detached' });
    await page.locator('tr[data-server="github.com"][data-type=ssh]').waitFor();
    await page.getByRole('button', { name: 'Add TLS certificate' }).click();
    await page.getByLabel('Repository server name').fill('git.example.com');
    await page.getByLabel('TLS certificate (PEM)').fill(tlsCert);
    await page.keyboard.press('Tab'); // leaves the text area, where Enter is a new line
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await dialog().waitFor({ state: 'detached' });
    await page.locator('tr[data-server="git.example.com"][data-type=https]').waitFor();
    await page.getByRole('button', { name: 'Delete ssh ssh-ed25519 of github.com' }).click();
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await page.locator('tr[data-server="github.com"]').waitFor({ state: 'detached' });
  });

  await step('GnuPG keys: garbage is refused next to the field; an armored key is added and listed', async () => {
    await page.goto(`${process.env.PLUMB_UI_URL}/settings/gpgkeys`);
    await page.getByRole('button', { name: 'Add GnuPG key' }).click();
    await page.getByLabel('GnuPG public key data (ASCII-armored)').fill('not a key');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await fieldError('keyData', /ASCII-armored/);
    await page.getByLabel('GnuPG public key data (ASCII-armored)').fill(gpgKey);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await dialog().waitFor({ state: 'detached' });
    await page.locator(`tr[data-key="${gpgKeyId}"]`).waitFor();
    await shot('gpgkeys');
  });
});
