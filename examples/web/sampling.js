// The page's sampler: NUTS (deploy/nuts, served under /nuts/) on the exported regression, with the
// points of the page as its data. Draws a progress bar while the chains run in Web Workers, then
// trace plots and histograms of each variable and its R-hat and bulk ESS. window.example.sample()
// is what the browser test (deploy/tests/test_nuts.py) calls; the Sample button does the same.
import { sampleInWorkers } from '/nuts/browser.mjs';

const VARIABLES = ['intercept', 'slope', 'sigma'];
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728'];
const button = document.getElementById('sample');
const progressBar = document.getElementById('progress');
const sampleStatus = document.getElementById('sample-status');
const table = document.querySelector('#diagnostics tbody');
const plots = document.getElementById('plots');

function chainsOf(variable) {
  const [chains, draws] = variable.dims;
  return Array.from({ length: chains }, (_, c) => variable.data.subarray(c * draws, (c + 1) * draws));
}

function range(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
}

function trace(canvas, chains) {
  const ctx = canvas.getContext('2d');
  const [lo, hi] = range(chains.flatMap((c) => Array.from(c)));
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  chains.forEach((c, k) => {
    ctx.strokeStyle = COLORS[k % COLORS.length];
    ctx.globalAlpha = 0.7;
    ctx.beginPath();
    c.forEach((v, d) => {
      const x = (d / (c.length - 1)) * canvas.width;
      const y = (1 - (v - lo) / (hi - lo)) * canvas.height;
      if (d === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  });
  ctx.globalAlpha = 1;
}

function histogram(canvas, values, bins = 40) {
  const ctx = canvas.getContext('2d');
  const [lo, hi] = range(values);
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor(((v - lo) / (hi - lo)) * bins))] += 1;
  const top = Math.max(...counts);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#4a6fa5';
  const w = canvas.width / bins;
  counts.forEach((n, b) => ctx.fillRect(b * w, canvas.height * (1 - n / top), w - 1, canvas.height * (n / top)));
  ctx.fillStyle = '#222';
  ctx.font = '11px sans-serif';
  ctx.fillText(lo.toPrecision(3), 2, canvas.height - 2);
  ctx.fillText(hi.toPrecision(3), canvas.width - 40, canvas.height - 2);
}

function show(fit) {
  table.textContent = '';
  plots.textContent = '';
  for (const name of VARIABLES) {
    const variable = fit.posterior[name];
    const all = Array.from(variable.data);
    const mean = all.reduce((a, b) => a + b, 0) / all.length;
    const sd = Math.sqrt(all.reduce((a, b) => a + (b - mean) ** 2, 0) / (all.length - 1));
    const row = table.insertRow();
    [name, mean.toFixed(3), sd.toFixed(3), fit.diagnostics[name].rhat[0].toFixed(3),
      fit.diagnostics[name].essBulk[0].toFixed(0)].forEach((text) => { row.insertCell().textContent = text; });
    const figure = document.createElement('figure');
    const traceCanvas = Object.assign(document.createElement('canvas'), { width: 360, height: 110, id: `trace-${name}` });
    const histCanvas = Object.assign(document.createElement('canvas'), { width: 360, height: 110, id: `hist-${name}` });
    const caption = document.createElement('figcaption');
    caption.textContent = `${name}: trace of each chain (top) and histogram of all draws`;
    figure.append(traceCanvas, histCanvas, caption);
    plots.append(figure);
    trace(traceCanvas, chainsOf(variable));
    histogram(histCanvas, all);
  }
}

/** Samples the posterior given the page's points; resolves to what sampleInWorkers returns. */
async function samplePosterior(options = {}) {
  const points = window.example.last ? window.example.last.points : [];
  if (points.length === 0) throw new Error('no data: add points first');
  const settings = {
    chains: 4, draws: Number(document.getElementById('draws').value), tune: 1000,
    seed: Number(document.getElementById('seed').value), ...options,
    deterministics: '/models/regression.det.onnx',
    data: { xy: { dims: [points.length, 2], data: points.flat() } },
  };
  const total = settings.chains * ((settings.tune ?? 1000) + settings.draws);
  const done = new Map();
  progressBar.value = 0;
  button.disabled = true;
  sampleStatus.textContent = 'sampling…';
  // Animation frames counted while the workers sample: a page whose main thread were busy would count none.
  let frames = 0;
  let counting = true;
  const tick = () => { frames += 1; if (counting) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const start = performance.now();
  try {
    const fit = await sampleInWorkers('/models/regression.onnx', settings, {
      onProgress: (p) => {
        done.set(p.chain, p.iteration);
        progressBar.value = [...done.values()].reduce((a, b) => a + b, 0) / total;
        sampleStatus.textContent = `chain ${p.chain}: ${p.iteration} / ${p.total}${p.tuning ? ' (warm-up)' : ''}`;
      },
    });
    const seconds = (performance.now() - start) / 1000;
    show(fit);
    sampleStatus.textContent = `${settings.chains} chains × ${settings.draws} draws in ${seconds.toFixed(1)} s · `
      + `${fit.stats.divergences} divergences · step sizes ${fit.stats.stepSize.map((s) => s.toFixed(2)).join(', ')}`;
    window.example.fit = { fit, seconds, frames, progress: progressBar.value, points };
    return fit;
  } catch (error) {
    sampleStatus.textContent = `sampling failed: ${error.message}`;
    throw error;
  } finally {
    counting = false;
    button.disabled = false;
  }
}

button.addEventListener('click', () => { samplePosterior().catch(() => {}); });
window.example.sample = samplePosterior;
