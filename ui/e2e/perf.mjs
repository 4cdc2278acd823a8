// First page load of the Applications page with many Applications, in Chromium, cold (new
// browser context: nothing cached) and warm (reload), three times. "Loaded" is when the page
// shows the first screen of tiles and its summary counts every Application (`N of N
// applications`): the list draws only the tiles near the viewport (apps.tsx), so the DOM never
// holds all N. Also printed, from the browser's Resource Timing: the list request (time to
// first byte, whole request, body size), the same list without `fields` for comparison, and
// the JavaScript the page loaded. Prints the numbers; asserts only that the page got there.
// Started by the ignored test `first_load_of_1000_applications` (target `ui`).
// Environment: PLUMB_UI_URL, PLUMB_APPS (count), PLUMB_CHROMIUM.
import { chromium } from 'playwright-core';

const base = process.env.PLUMB_UI_URL;
const n = Number(process.env.PLUMB_APPS || '1000');
const browser = await chromium.launch({
  executablePath: process.env.PLUMB_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});

/** Waits until the first screen of tiles is drawn and every Application is counted. */
async function loaded(page) {
  await page.waitForFunction(
    (want) => {
      const s = document.querySelector('[data-testid=summary]');
      return (
        s &&
        s.textContent.replace(/\s+/g, ' ').includes(`${want} of ${want} applications`) &&
        document.querySelector(`ul.tiles[data-count="${want}"] [data-testid=app-tile]`) !== null
      );
    },
    n,
    { timeout: 120_000, polling: 'raf' },
  );
  return page.evaluate(() => {
    const list = performance.getEntriesByType('resource').find((e) => e.name.includes('/api/v1/applications?'));
    const scripts = performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'script' || e.name.endsWith('.js'));
    return {
      at: performance.now(),
      tiles: document.querySelectorAll('[data-testid=app-tile]').length,
      ttfb: list ? list.responseStart - list.requestStart : NaN,
      request: list ? list.responseEnd - list.startTime : NaN,
      bytes: list ? list.decodedBodySize : NaN,
      js: scripts.reduce((t, e) => t + (e.decodedBodySize || 0), 0),
    };
  });
}

const results = [];
try {
  for (let run = 0; run < 3; run++) {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/applications`);
    const cold = await loaded(page);
    await page.reload();
    const warm = await loaded(page);
    // The whole list, as the page asked for it before `fields`: its size and time.
    const full = await page.evaluate(async () => {
      const t = performance.now();
      const r = await fetch('/api/v1/applications');
      const text = await r.text();
      const got = performance.now();
      JSON.parse(text);
      return { ms: got - t, parse: performance.now() - got, bytes: text.length };
    });
    results.push({ cold: cold.at, warm: warm.at });
    const f = (x) => x.toFixed(0);
    console.log(
      `run ${run + 1}: ${n} applications: cold ${f(cold.at)} ms, warm ${f(warm.at)} ms; ` +
        `list with fields: ${(cold.bytes / 1024).toFixed(0)} KiB, first byte ${f(cold.ttfb)} ms, request ${f(cold.request)} ms; ` +
        `without fields: ${(full.bytes / 1024).toFixed(0)} KiB in ${f(full.ms)} ms, JSON.parse ${f(full.parse)} ms; ` +
        `tiles in the DOM ${cold.tiles}; JavaScript ${(cold.js / 1024).toFixed(0)} KiB`,
    );
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
