// Samples the models of a jobs file and writes what came out (the tests and bench/ read it):
//
//   node deploy/nuts/run_nuts.mjs <jobs.json> <out.json> <node|web|chromium|example>
//
// jobs.json: {"jobs": [{"name", "logp": file, "deterministics": file, "options": {...}}]}, files
// relative to its folder. "node" samples with onnxruntime-node, "web" with onnxruntime-web
// (WebAssembly) under Node, "chromium" in headless Chromium: the example page is opened and the
// jobs run in its Web Workers (browser.mjs); "example" opens the example page (examples/web,
// its models exported by examples/web/model.py) and samples its regression as its Sample button
// does, with each job's options (no models: the page's own). Out: {name: {posterior, stats, diagnostics,
// seconds} or {error: message}}, arrays as JSON lists. CHROMIUM overrides the browser binary.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const [jobsPath, outPath, runtime] = process.argv.slice(2);
if (!jobsPath || !outPath || !['node', 'web', 'chromium', 'example'].includes(runtime)) {
  console.error('usage: node run_nuts.mjs <jobs.json> <out.json> <node|web|chromium|example>');
  process.exit(2);
}
const jobsDir = dirname(resolve(jobsPath));
const { jobs } = JSON.parse(readFileSync(jobsPath, 'utf8'));

function plain(fit) {
  const posterior = {};
  for (const [name, v] of Object.entries(fit.posterior)) posterior[name] = { dims: v.dims, data: Array.from(v.data) };
  return { posterior, stats: fit.stats, diagnostics: fit.diagnostics };
}

const results = {};
if (runtime === 'chromium' || runtime === 'example') {
  const { chromium } = await import('playwright-core');
  const { startServer } = await import('../serve.mjs');
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    console.error(`no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
    process.exit(3);
  }
  const { server, url } = await startServer({ casesDir: jobsDir });
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    if (runtime === 'example') {
      await page.goto(url);
      await page.waitForFunction(() => window.example && window.example.ready && window.example.sample, null,
        { timeout: 60000 });
      await page.evaluate(() => window.example.ready);
    } else await page.goto(`${url}nuts/blank.html`);
    for (const job of jobs) {
      if (runtime === 'example') {
        results[job.name] = await page.evaluate(async (j) => {
          try {
            const fit = await window.example.sample(j.options);
            const posterior = {};
            for (const [name, v] of Object.entries(fit.posterior)) posterior[name] = { dims: v.dims, data: Array.from(v.data) };
            const { seconds, frames, progress, points } = window.example.fit;
            // Whether the trace plot has ink: any pixel not transparent.
            const ink = document.getElementById('trace-intercept').getContext('2d').getImageData(0, 0, 360, 110)
              .data.some((value, i) => i % 4 === 3 && value > 0);
            const table = Array.from(document.querySelectorAll('#diagnostics tbody tr'), (r) => r.innerText);
            return { posterior, stats: fit.stats, diagnostics: fit.diagnostics, seconds, frames, progress, points,
              ink, table };
          } catch (error) {
            return { error: String(error.message || error) };
          }
        }, job);
        results[job.name].pageErrors = pageErrors;
        continue;
      }
      results[job.name] = await page.evaluate(async (j) => {
        const { sampleInWorkers } = await import('/nuts/browser.mjs');
        const start = performance.now();
        try {
          const options = { ...j.options, deterministics: j.deterministics && `/cases/${j.deterministics}` };
          const fit = await sampleInWorkers(`/cases/${j.logp}`, options, { workers: j.workers });
          const posterior = {};
          for (const [name, v] of Object.entries(fit.posterior)) posterior[name] = { dims: v.dims, data: Array.from(v.data) };
          return { posterior, stats: fit.stats, diagnostics: fit.diagnostics, seconds: (performance.now() - start) / 1000 };
        } catch (error) {
          return { error: String(error.message || error) };
        }
      }, job);
    }
  } finally {
    await browser.close();
    server.close();
  }
} else {
  const ort = runtime === 'node' ? await import('onnxruntime-node') : await import('onnxruntime-web');
  if (runtime === 'web') ort.env.wasm.numThreads = 1;
  const { sample } = await import('./nuts.mjs');
  for (const job of jobs) {
    const start = performance.now();
    try {
      const options = { ...job.options, deterministics: job.deterministics && join(jobsDir, job.deterministics) };
      const fit = await sample(ort, join(jobsDir, job.logp), options);
      results[job.name] = { ...plain(fit), seconds: (performance.now() - start) / 1000 };
    } catch (error) {
      results[job.name] = { error: String(error.message || error) };
    }
  }
}
writeFileSync(outPath, JSON.stringify(results));
const failed = Object.values(results).filter((r) => r.error).length;
console.log(`${runtime}: sampled ${jobs.length} models, ${failed} failed`);
