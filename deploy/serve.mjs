// A static server for the example page and the browser tests:
//
//   node deploy/serve.mjs [port]        (make example-web exports the model first)
//
//   /             examples/web/ (the page: index.html, app.js)
//   /ort/         onnxruntime-web's dist/ (ort.min.js and its .wasm/.mjs files)
//   /models/      deploy/build/example/ (regression.onnx, written by examples/web/model.py)
//   /cases/       the cases of export_cases.py (browser tests only)
//   /runner.mjs   the case runner shared with the Node runs
//   /nuts/        the NUTS sampler (deploy/nuts: the ES modules, the worker, a blank test page)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEPLOY = dirname(fileURLToPath(import.meta.url));
const REPO = dirname(DEPLOY);

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
  '.map': 'application/json',
};

export function routes(casesDir) {
  return [
    ['/ort/', join(DEPLOY, 'node_modules', 'onnxruntime-web', 'dist')],
    ['/models/', join(DEPLOY, 'build', 'example')],
    ...(casesDir ? [['/cases/', resolve(casesDir)]] : []),
    ['/runner.mjs', join(DEPLOY, 'runner.mjs')],
    ['/nuts/', join(DEPLOY, 'nuts')],
    ['/', join(REPO, 'examples', 'web')],
  ];
}

/** Resolves a URL path to a file under one of the roots, or null (never outside them). */
function fileFor(urlPath, table) {
  for (const [prefix, root] of table) {
    if (urlPath === prefix) return prefix.endsWith('/') ? join(root, 'index.html') : root;
    if (prefix.endsWith('/') && urlPath.startsWith(prefix)) {
      const file = resolve(root, '.' + sep + decodeURIComponent(urlPath.slice(prefix.length)));
      return file.startsWith(root + sep) ? file : null;
    }
  }
  return null;
}

/** Starts the server; resolves to {server, url}. Port 0 picks a free port. */
export function startServer({ port = 0, host = '127.0.0.1', casesDir } = {}) {
  const table = routes(casesDir);
  const server = createServer(async (request, response) => {
    const file = fileFor(new URL(request.url, 'http://x').pathname, table);
    try {
      if (file === null) throw new Error('outside the served directories');
      const body = await readFile(file);
      response.writeHead(200, { 'Content-Type': TYPES[extname(file)] || 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404, { 'Content-Type': 'text/plain' });
      response.end('not found\n');
    }
  });
  return new Promise((done) => {
    server.listen(port, host, () => done({ server, url: `http://${host}:${server.address().port}/` }));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { url } = await startServer({ port: Number(process.argv[2] || 8000) });
  console.log(`serving the example page at ${url} (Ctrl-C stops)`);
}
