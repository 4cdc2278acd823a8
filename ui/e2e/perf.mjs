// First page load of the Applications page with many Applications, in Chromium: the time from
// navigation start until every tile is in the DOM (performance.now() in the page), cold (new
// browser context: nothing cached) and warm (reload). Prints the numbers; asserts only that all
// tiles appear. Started by the ignored test `first_load_of_1000_applications` (target `ui`).
// Environment: PLUMB_UI_URL, PLUMB_APPS (count), PLUMB_CHROMIUM.
import { chromium } from 'playwright-core';

const base = process.env.PLUMB_UI_URL;
const n = Number(process.env.PLUMB_APPS || '1000');
const browser = await chromium.launch({
  executablePath: process.env.PLUMB_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const results = [];
try {
  for (let run = 0; run < 3; run++) {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/applications`);
    await page.waitForFunction((want) => document.querySelectorAll('[data-testid=app-tile]').length >= want, n, { timeout: 120_000, polling: 'raf' });
    const cold = await page.evaluate(() => performance.now());
    await page.reload();
    await page.waitForFunction((want) => document.querySelectorAll('[data-testid=app-tile]').length >= want, n, { timeout: 120_000, polling: 'raf' });
    const warm = await page.evaluate(() => performance.now());
    results.push({ cold, warm });
    console.log(`run ${run + 1}: ${n} tiles: cold ${cold.toFixed(0)} ms, warm ${warm.toFixed(0)} ms`);
    await context.close();
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`median of 3: cold ${med(results.map((r) => r.cold)).toFixed(0)} ms, warm ${med(results.map((r) => r.warm)).toFixed(0)} ms`);
  console.log('PASS');
} catch (e) {
  console.log(`not ok - ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
