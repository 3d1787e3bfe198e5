// Runs the exported cases in headless Chromium with onnxruntime-web (WebAssembly):
//
//   node deploy/run_browser.mjs <cases dir> <results.json>
//
// Serves the example page (serve.mjs), opens it in Chromium driven by
// playwright-core, checks that the page loaded its model and drew a
// posterior, moves its data once (a click) and waits for the redraw, then
// runs every case inside the page. CHROMIUM overrides the browser
// executable (default: Debian's /usr/bin/chromium); DEPLOY_REPEATS=N also
// times N more runs of each case (runner.mjs).
import { existsSync, writeFileSync } from 'node:fs';

import { chromium } from 'playwright-core';

import { startServer } from './serve.mjs';

const [casesDir, outPath] = process.argv.slice(2);
if (!casesDir || !outPath) {
  console.error('usage: node run_browser.mjs <cases dir> <results.json>');
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.error(`no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  process.exit(3);
}

const { server, url } = await startServer({ casesDir });
// Running as root (containers, CI) Chromium refuses its sandbox.
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  await page.goto(url);
  await page.waitForFunction(() => window.example && window.example.ready, null, { timeout: 30000 });
  await page.evaluate(() => window.example.ready);
  const first = await page.evaluate(() => ({ ...window.example.last, updates: window.example.updates }));
  // A click on the data canvas adds a point: the page must recompute.
  await page.click('#data', { position: { x: 300, y: 60 } });
  await page.waitForFunction((n) => window.example.updates > n && window.example.last.points.length > 0, first.updates,
    { timeout: 60000 });
  const afterClick = await page.evaluate(() => window.example.last);
  const probe = await page.evaluate(() => window.example.logDensity(0.3, 0.8, -0.5));
  const userAgent = await page.evaluate(() => navigator.userAgent);

  const repeats = Number(process.env.DEPLOY_REPEATS || 0);
  const results = await page.evaluate(async (repeatCount) => {
    const { runCases } = await import('/runner.mjs');
    const { cases } = await (await fetch('/cases/cases.json')).json();
    const load = async (c) => new Uint8Array(await (await fetch(`/cases/${c.model}`)).arrayBuffer());
    return runCases(window.ort, cases, load, {}, repeatCount);
  }, repeats);
  writeFileSync(outPath, JSON.stringify({
    runtime: 'onnxruntime-web (chromium)', userAgent, page: { first, afterClick, probe, consoleErrors }, results,
  }));
  const failed = Object.values(results).filter((r) => r.error).length;
  console.log(`chromium (${userAgent.match(/Chrome\/[\d.]+/)}): ran ${Object.keys(results).length} cases, ${failed} raised`);
} finally {
  await browser.close();
  server.close();
}
