// Sampling from a page: the chains run in Web Workers (worker.mjs), the page gets progress
// events and, at the end, what nuts.mjs's sample() returns.
//
//   import { sampleInWorkers } from '/nuts/browser.mjs';
//   const fit = await sampleInWorkers('/models/logp.onnx', { deterministics: '/models/det.onnx', seed: 1 },
//     { onProgress: (p) => console.log(p.chain, p.iteration, p.total) });
//
// The promise rejects with the sampler's message when a worker fails (bad model, no finite
// starting point, a sampler that diverges everywhere) or cannot start; it never hangs on an error.
import { assemble, DEFAULTS } from './nuts.mjs';

const absolute = (url) => (typeof url === 'string' ? new URL(url, location.href).href : url);

export function sampleInWorkers(logp, options = {}, { workers, onProgress, ortUrl = '/ort/ort.min.mjs',
  wasmPaths = '/ort/', workerUrl = new URL('./worker.mjs', import.meta.url).href } = {}) {
  const chains = options.chains ?? DEFAULTS.chains;
  const count = Math.max(1, Math.min(chains, workers ?? (navigator.hardwareConcurrency || 1)));
  const shares = Array.from({ length: count }, () => []);
  for (let k = 0; k < chains; k += 1) shares[k % count].push(k);
  const settings = { ...options, deterministics: options.deterministics && absolute(options.deterministics) };
  const started = [];
  const finish = () => started.forEach((w) => w.terminate());
  const runs = shares.map((chainIds) => new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { type: 'module' });
    started.push(worker);
    worker.onmessage = ({ data }) => {
      if (data.type === 'progress') { if (onProgress) onProgress(data); } else if (data.type === 'done') resolve(data);
      else reject(new Error(data.message));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`the sampler's worker failed: ${event.message || 'could not load ' + workerUrl}`));
    };
    worker.postMessage({ logp: absolute(logp), options: settings, chainIds, ortUrl: absolute(ortUrl),
      wasmPaths: absolute(wasmPaths) });
  }));
  return Promise.all(runs).then((done) => {
    finish();
    return assemble(done[0].layout, done.flatMap((d) => d.results));
  }, (error) => {
    finish();
    throw error;
  });
}
