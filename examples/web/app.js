// The example page: evaluates an exported PyMC log-density (deploy/build/example/regression.onnx,
// written by model.py) on a grid of (intercept, slope) with onnxruntime-web, and redraws the
// posterior whenever the points or the noise level change. window.example is what the browser
// test (deploy/run_browser.mjs) inspects.
/* global ort */

const GRID = 32;
const INTERCEPT = [-1.5, 2.5];
const SLOPE = [-2.5, 4];
const X = [-1, 1];
const Y = [-2.5, 3];

const dataCanvas = document.getElementById('data');
const posteriorCanvas = document.getElementById('posterior');
const sigmaInput = document.getElementById('sigma');
const status = document.getElementById('status');

const lerp = ([a, b], t) => a + (b - a) * t;
const unlerp = ([a, b], v) => (v - a) / (b - a);

let session;
let points = [];
let busy = false;
let dirty = false;

async function logDensity(intercept, slope, logSigma) {
  const xy = new ort.Tensor('float64', Float64Array.from(points.flat()), [points.length, 2]);
  const point = new ort.Tensor('float64', Float64Array.from([intercept, slope, logSigma]), [3]);
  const { logp, dlogp } = await session.run({ point, xy });
  return { logp: logp.data[0], dlogp: Array.from(dlogp.data) };
}

async function evaluateGrid() {
  const logSigma = Math.log(Number(sigmaInput.value));
  const logps = new Float64Array(GRID * GRID);
  for (let i = 0; i < GRID; i += 1) {
    for (let j = 0; j < GRID; j += 1) {
      const intercept = lerp(INTERCEPT, (i + 0.5) / GRID);
      const slope = lerp(SLOPE, (j + 0.5) / GRID);
      logps[i * GRID + j] = (await logDensity(intercept, slope, logSigma)).logp;
    }
  }
  return logps;
}

function weightsOf(logps) {
  const max = Math.max(...logps);
  const weights = logps.map((v) => Math.exp(v - max));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

function drawPosterior(weights) {
  const ctx = posteriorCanvas.getContext('2d');
  const cell = posteriorCanvas.width / GRID;
  const top = Math.max(...weights);
  for (let i = 0; i < GRID; i += 1) {
    for (let j = 0; j < GRID; j += 1) {
      const shade = Math.round(255 * (1 - weights[i * GRID + j] / top));
      ctx.fillStyle = `rgb(${shade}, ${shade}, 255)`;
      ctx.fillRect(i * cell, posteriorCanvas.height - (j + 1) * cell, cell + 1, cell + 1);
    }
  }
}

function line(ctx, intercept, slope) {
  const toPixel = (x, y) => [unlerp(X, x) * dataCanvas.width, (1 - unlerp(Y, y)) * dataCanvas.height];
  ctx.beginPath();
  ctx.moveTo(...toPixel(X[0], intercept + slope * X[0]));
  ctx.lineTo(...toPixel(X[1], intercept + slope * X[1]));
  ctx.stroke();
}

function drawData(weights) {
  const ctx = dataCanvas.getContext('2d');
  ctx.clearRect(0, 0, dataCanvas.width, dataCanvas.height);
  const cellValue = (k) => [lerp(INTERCEPT, (Math.floor(k / GRID) + 0.5) / GRID), lerp(SLOPE, ((k % GRID) + 0.5) / GRID)];
  // 20 posterior draws from the grid (a fixed low-discrepancy sequence: the picture is stable).
  ctx.strokeStyle = 'rgba(0, 0, 0, 0.15)';
  const cumulative = [];
  weights.reduce((acc, w, k) => (cumulative[k] = acc + w), 0);
  for (let d = 0; d < 20; d += 1) {
    const u = (d * 0.618033988749895 + 0.5) % 1;
    line(ctx, ...cellValue(Math.max(0, cumulative.findIndex((c) => c >= u))));
  }
  let meanIntercept = 0;
  let meanSlope = 0;
  weights.forEach((w, k) => { const [a, b] = cellValue(k); meanIntercept += w * a; meanSlope += w * b; });
  ctx.strokeStyle = 'black';
  ctx.lineWidth = 2;
  line(ctx, meanIntercept, meanSlope);
  ctx.lineWidth = 1;
  ctx.fillStyle = '#c22';
  for (const [x, y] of points) {
    ctx.beginPath();
    ctx.arc(unlerp(X, x) * dataCanvas.width, (1 - unlerp(Y, y)) * dataCanvas.height, 4, 0, 2 * Math.PI);
    ctx.fill();
  }
  return { intercept: meanIntercept, slope: meanSlope };
}

async function update() {
  if (busy) { dirty = true; return; }
  busy = true;
  try {
    do {
      dirty = false;
      const start = performance.now();
      const logps = await evaluateGrid();
      const weights = weightsOf(logps);
      drawPosterior(weights);
      const mean = drawData(weights);
      const ms = performance.now() - start;
      window.example.last = { logps: Array.from(logps), mean, points: points.map((p) => [...p]), sigma: Number(sigmaInput.value) };
      window.example.updates += 1;
      status.textContent = `${points.length} points · posterior mean intercept ${mean.intercept.toFixed(3)}, slope ${mean.slope.toFixed(3)} · ${GRID * GRID} model calls in ${ms.toFixed(0)} ms`;
    } while (dirty);
  } finally {
    busy = false;
  }
}

dataCanvas.addEventListener('click', (event) => {
  const rect = dataCanvas.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  const near = points.findIndex(([x, y]) => Math.hypot(unlerp(X, x) * dataCanvas.width - px, (1 - unlerp(Y, y)) * dataCanvas.height - py) < 8);
  if (near >= 0) points.splice(near, 1);
  else points.push([lerp(X, px / dataCanvas.width), lerp(Y, 1 - py / dataCanvas.height)]);
  update();
});
sigmaInput.addEventListener('input', () => {
  document.getElementById('sigma-value').textContent = Number(sigmaInput.value).toFixed(2);
  update();
});

window.example = { updates: 0, logDensity, update, setPoints: (p) => { points = p.map((q) => [...q]); } };
window.example.ready = (async () => {
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = 1; // threads need a cross-origin isolated page
  session = await ort.InferenceSession.create('/models/regression.onnx');
  points = await (await fetch('/models/data.json')).json();
  await update();
  return true;
})();
window.example.ready.catch((error) => { status.textContent = `failed: ${error.message}`; });
