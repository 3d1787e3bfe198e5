// Runs the exported cases in Node:
//
//   node deploy/run_node.mjs <cases dir> <node|web> <results.json>
//
// "node" uses onnxruntime-node (the native CPU build), "web" uses
// onnxruntime-web's WebAssembly backend under Node (the code the browser runs).
// DEPLOY_REPEATS=N also times N more runs of each case (runner.mjs).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runCases } from './runner.mjs';

const [casesDir, backend, outPath] = process.argv.slice(2);
if (!casesDir || !['node', 'web'].includes(backend) || !outPath) {
  console.error('usage: node run_node.mjs <cases dir> <node|web> <results.json>');
  process.exit(2);
}

const ort = backend === 'node' ? await import('onnxruntime-node') : await import('onnxruntime-web');
if (backend === 'web') ort.env.wasm.numThreads = 1;
const { cases } = JSON.parse(readFileSync(join(casesDir, 'cases.json'), 'utf8'));
// onnxruntime-web takes the model's bytes; onnxruntime-node also accepts them.
const repeats = Number(process.env.DEPLOY_REPEATS || 0);
const results = await runCases(ort, cases, (c) => readFileSync(join(casesDir, c.model)), {}, repeats);
writeFileSync(outPath, JSON.stringify({ runtime: `onnxruntime-${backend}`, version: ort.env.versions, results }));
const failed = Object.values(results).filter((r) => r.error).length;
console.log(`onnxruntime-${backend}: ran ${cases.length} cases, ${failed} raised`);
