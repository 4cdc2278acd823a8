// The ApplicationSets pages in a real browser, against a real `plumb server` with
// authentication on the test control plane. Started by crates/plumb-server/tests/ui
// (`browser_applicationset_pages`), which created the set, its Applications and the brake's
// DeletionHeld status and an Event about it, and checks afterwards the annotation the Confirm button wrote.
// Environment: PLUMB_UI_URL, PLUMB_ADMIN_PASSWORD, PLUMB_APPSET (the set), PLUMB_HELD (the
// Application whose deletion the brake holds), PLUMB_CHROMIUM, PLUMB_SCREENSHOTS, PLUMB_FAILURE_DIR.
import { assert, atPath, dialog, login, nav, page, run, shot, step } from './settings-lib.mjs';

const adminPw = process.env.PLUMB_ADMIN_PASSWORD;
const set = process.env.PLUMB_APPSET || 'ui-fleet';
const held = process.env.PLUMB_HELD || 'ui-fleet-b';

if (!process.env.PLUMB_UI_URL || !adminPw) {
  console.error('appsets.mjs: PLUMB_UI_URL and PLUMB_ADMIN_PASSWORD are required');
  process.exit(2);
}

await run('appsets', async () => {
  await step('the list shows the set with its generated count and true conditions', async () => {
    await login('/applicationsets', adminPw);
    const row = page.locator(`[data-appset="${set}"]`);
    await row.waitFor();
    assert((await row.locator('[data-field="generated"]').innerText()).trim() === '1', 'one generated Application');
    await row.locator('[data-condition="DeletionHeld"]').waitFor();
    await shot('applicationsets');
  });

  await step("the set's page: generated Applications, conditions, held deletions", async () => {
    await page.getByRole('link', { name: set, exact: true }).click();
    await page.waitForFunction((s) => location.pathname.startsWith('/applicationsets/') && location.pathname.endsWith(`/${s}`), set);
    await page.getByTestId('generated').locator(`[data-app="${held}"]`).waitFor();
    await page.getByTestId('conditions').locator('[data-condition="DeletionHeld"]').waitFor();
    await page.getByTestId('pending-deletions').locator(`[data-pending="${held}"]`).waitFor();
    const event = page.getByTestId('events').locator('[data-event="DeletionHeld"]');
    await event.waitFor();
    assert((await event.innerText()).includes(`would delete ${held}`), "the set's Event");
    await shot('applicationset');
  });

  await step('Confirm writes the confirmation through the server', async () => {
    await page.getByRole('button', { name: `Confirm deletion of ${held}` }).click();
    await dialog().waitFor();
    await page.getByRole('button', { name: `Delete ${held}` }).click();
    await dialog().waitFor({ state: 'detached' });
  });

  await step('the sidebar leads back to the list', async () => {
    await nav('ApplicationSets');
    await atPath('/applicationsets');
    await page.locator(`[data-appset="${set}"]`).waitFor();
  });
});
