// A Web Worker (type: 'module') that runs its share of the chains, so the page stays responsive:
// posts {type: 'progress', ...} as it goes, then {type: 'done', layout, results} or
// {type: 'error', message}. Started by browser.mjs.
import { runChains } from './nuts.mjs';

self.onmessage = async ({ data: message }) => {
  try {
    const ort = await import(message.ortUrl);
    ort.env.wasm.wasmPaths = message.wasmPaths;
    ort.env.wasm.numThreads = 1; // threads need a cross-origin isolated page; chains run in several workers instead
    const onProgress = (progress) => self.postMessage({ type: 'progress', ...progress });
    const { layout, results } = await runChains(ort, message.logp, { ...message.options, onProgress },
      message.chainIds);
    self.postMessage({ type: 'done', layout, results });
  } catch (error) {
    self.postMessage({ type: 'error', message: String((error && error.message) || error) });
  }
};
