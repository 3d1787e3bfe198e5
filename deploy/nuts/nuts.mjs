// The No-U-Turn sampler for models exported by pytensor_onnx.pymc.export_logp(model, flat=True),
// written here from the algorithm's descriptions:
//
// - Hoffman & Gelman (2014), "The No-U-Turn Sampler", JMLR 15: the doubling trajectory and
//   step-size adaptation by dual averaging (their Algorithm 5 constants: gamma 0.05, t0 10,
//   kappa 0.75);
// - Betancourt (2017), "A Conceptual Introduction to Hamiltonian Monte Carlo": multinomial
//   sampling of the proposal among the trajectory's states (biased towards the new half when
//   the tree doubles), and the generalized no-U-turn criterion on the summed momenta, checked
//   over every subtree and across the two halves of each merge (as Stan does since 2.21);
// - the Stan Reference Manual, "HMC algorithm parameters": windowed warm-up (75 / 25 doubling /
//   50 iterations), a diagonal inverse metric from each slow window's variances regularized
//   towards 1e-3, and a fresh step size after each metric update; divergence when the energy
//   error exceeds 1000; maximum tree depth 10.
//
// The log-density and its gradient are evaluated by ONNX Runtime (onnxruntime-node, or
// onnxruntime-web in a page or worker): the caller passes the `ort` module, so the same code
// runs in Node and in a browser. Draws come back per variable in PyMC's shapes, on the
// constrained scale when the model's deterministics export is given.
import { essBulk, rhatRank } from './diagnostics.mjs';

export const LAYOUT_KEY = 'pytensor_onnx.pymc.layout';

export const DEFAULTS = Object.freeze({
  chains: 4,
  tune: 1000,
  draws: 1000,
  seed: 0,
  targetAccept: 0.8,
  maxTreeDepth: 10,
  maxEnergyError: 1000,
  initialStepSize: 1,
  // Random starting points are drawn uniformly in (-jitter, jitter) on the unconstrained scale (Stan's 2).
  jitter: 2,
  // A chain that diverges on this many transitions in a row is stopped: the posterior cannot be explored.
  maxDivergentStreak: 100,
  progressEvery: 50,
});

// ---------------------------------------------------------------------------------------------
// Random numbers: xoshiro128** (Blackman & Vigna), four 32-bit words of state, seeded from
// (seed, chain) through the 32-bit MurmurHash3 finalizer so nearby seeds give unrelated streams.

function mix32(x) {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

const rotl = (x, k) => ((x << k) | (x >>> (32 - k))) >>> 0;

export class Random {
  constructor(seed, stream = 0) {
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`seed must be a non-negative integer, got ${seed}`);
    const low = seed % 0x100000000;
    const high = Math.floor(seed / 0x100000000);
    let h = mix32(low ^ mix32(high + 0x9e3779b9));
    this.s = new Uint32Array(4);
    for (let i = 0; i < 4; i += 1) {
      h = mix32(h + 0x9e3779b9 + mix32(stream + 0x632be5ab * (i + 1)));
      this.s[i] = h;
    }
    if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1; // the all-zero state is a fixed point
    this.spare = null;
  }

  nextUint32() {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform() {
    const high = this.nextUint32() >>> 5; // 27 bits
    const low = this.nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** Standard normal (Box-Muller; the second value of each pair is kept for the next call). */
  normal() {
    if (this.spare !== null) {
      const value = this.spare;
      this.spare = null;
      return value;
    }
    const u = 1 - this.uniform(); // (0, 1]: log(u) is finite
    const radius = Math.sqrt(-2 * Math.log(u));
    const angle = 2 * Math.PI * this.uniform();
    this.spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  }
}

// ---------------------------------------------------------------------------------------------
// The layout, read from the model itself: ONNX Runtime's JavaScript API does not expose
// metadata_props, so the few protobuf fields needed are read here (ModelProto field 14,
// metadata_props: StringStringEntryProto {1: key, 2: value}).

function readVarint(bytes, at) {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (at.i >= bytes.length) throw new Error('truncated varint');
    const byte = bytes[at.i];
    at.i += 1;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
    if (scale > 2 ** 63) throw new Error('varint too long');
  }
}

/** (field number, wire type, payload) of each top-level field of a protobuf message. */
function* protobufFields(bytes, start = 0, end = bytes.length) {
  const at = { i: start };
  while (at.i < end) {
    const key = readVarint(bytes, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) yield [field, wire, readVarint(bytes, at)];
    else if (wire === 1) at.i += 8;
    else if (wire === 5) at.i += 4;
    else if (wire === 2) {
      const length = readVarint(bytes, at);
      if (at.i + length > end) throw new Error('truncated field');
      yield [field, wire, bytes.subarray(at.i, at.i + length)];
      at.i += length;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (at.i > end) throw new Error('truncated field');
  }
}

/** The model's metadata_props as an object; throws when the bytes are not an ONNX model. */
export function readMetadata(bytes) {
  const text = new TextDecoder();
  const metadata = {};
  let sawGraph = false;
  try {
    for (const [field, wire, payload] of protobufFields(bytes)) {
      if (field === 7 && wire === 2) sawGraph = true;
      if (field !== 14 || wire !== 2) continue;
      let key = '';
      let value = '';
      for (const [f, w, p] of protobufFields(payload)) {
        if (w !== 2) continue;
        if (f === 1) key = text.decode(p);
        if (f === 2) value = text.decode(p);
      }
      metadata[key] = value;
    }
  } catch (error) {
    throw new Error(`not an ONNX model (${error.message})`);
  }
  if (!sawGraph) throw new Error('not an ONNX model (no graph)');
  return metadata;
}

/** The pytensor_onnx.pymc layout of a model (its bytes), checked for what sampling needs. */
export function readLayout(bytes, expectedFormat = 'pytensor-onnx.pymc.logp') {
  const metadata = readMetadata(bytes);
  if (!(LAYOUT_KEY in metadata)) {
    throw new Error(`the model has no '${LAYOUT_KEY}' metadata (no layout): export it with `
      + 'pytensor_onnx.pymc.export_logp(model, filename, flat=True)');
  }
  let layout;
  try {
    layout = JSON.parse(metadata[LAYOUT_KEY]);
  } catch (error) {
    throw new Error(`the model's layout is not valid JSON: ${error.message}`);
  }
  if (layout.format !== expectedFormat) {
    throw new Error(`the model's layout is of format '${layout.format}', expected '${expectedFormat}'`);
  }
  if (layout.input !== 'flat') {
    throw new Error('the model takes one input per variable: the sampler needs export_logp(..., flat=True)');
  }
  if (expectedFormat === 'pytensor-onnx.pymc.logp' && !(layout.outputs && layout.outputs.gradient)) {
    throw new Error('the model has no gradient output: the sampler needs export_logp(..., gradient=True)');
  }
  let offset = 0;
  for (const v of layout.variables || []) {
    const size = v.shape.reduce((a, b) => a * b, 1);
    if (v.offset !== offset || v.size !== size) {
      throw new Error(`the layout does not add up: variable '${v.name}' has shape [${v.shape}] and offset `
        + `${v.offset}, expected size ${size} at offset ${offset}`);
    }
    offset += size;
  }
  if (!layout.variables || offset !== layout.size || layout.size < 1) {
    throw new Error(`the layout does not add up: its variables hold ${offset} values, its size is ${layout.size}`);
  }
  return layout;
}

// ---------------------------------------------------------------------------------------------
// The target: log-density and gradient of a flat point, through one ONNX Runtime session.

async function modelBytes(model) {
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (typeof model === 'string') {
    const isNode = typeof process !== 'undefined' && process.versions && process.versions.node
      && typeof window === 'undefined' && typeof WorkerGlobalScope === 'undefined';
    if (isNode) {
      const { readFile } = await import('node:fs/promises');
      return new Uint8Array(await readFile(model));
    }
    const response = await fetch(model);
    if (!response.ok) throw new Error(`cannot fetch ${model}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  throw new Error('a model must be given as its bytes (Uint8Array, ArrayBuffer) or a path/URL');
}

function dataTensors(ort, layout, data = {}) {
  const feeds = {};
  for (const entry of layout.data || []) {
    const given = data[entry.name];
    if (given === undefined) {
      throw new Error(`the model takes the data input '${entry.name}' (a pm.Data container): give it in options.data`);
    }
    if (given instanceof ort.Tensor) feeds[entry.name] = given;
    else {
      const Typed = entry.dtype === 'float32' ? Float32Array : Float64Array;
      feeds[entry.name] = new ort.Tensor(entry.dtype, Typed.from(given.data.flat(Infinity)), given.dims);
    }
  }
  return feeds;
}

/** Opens the log-density model; returns {layout, session, evaluate(q) -> {logp, grad}, release}. */
export async function openTarget(ort, model, { data, sessionOptions } = {}) {
  const bytes = await modelBytes(model);
  const layout = readLayout(bytes);
  if (layout.dtype !== 'float64') {
    throw new Error(`the model computes in ${layout.dtype}; HMC needs float64 log-densities (export without float32=True)`);
  }
  const session = await ort.InferenceSession.create(bytes, sessionOptions || {});
  const inputName = layout.flat_input || 'point';
  const { logp: logpName, gradient: gradName } = layout.outputs;
  const wanted = [inputName, ...(layout.data || []).map((d) => d.name)];
  const missingInputs = wanted.filter((n) => !session.inputNames.includes(n));
  const missingOutputs = [logpName, gradName].filter((n) => !session.outputNames.includes(n));
  if (missingInputs.length || missingOutputs.length) {
    throw new Error(`the layout does not match the model: it names inputs [${wanted}] and outputs [${logpName}, `
      + `${gradName}], the model has inputs [${session.inputNames}] and outputs [${session.outputNames}]`);
  }
  const feeds = dataTensors(ort, layout, data);
  const n = layout.size;
  const evaluate = async (q) => {
    feeds[inputName] = new ort.Tensor('float64', q, [n]);
    let out;
    try {
      out = await session.run(feeds);
    } catch (error) {
      throw new Error(`the layout does not match the model: a point of ${n} values (the layout's size) `
        + `cannot be evaluated: ${String(error.message || error).split('\n')[0]}`);
    }
    const grad = out[gradName].data;
    if (out[logpName].data.length !== 1 || grad.length !== n) {
      throw new Error(`the layout does not match the model: ${n} values in, a gradient of ${grad.length} out`);
    }
    return { logp: Number(out[logpName].data[0]), grad: Float64Array.from(grad) };
  };
  return { layout, session, evaluate, release: () => session.release && session.release() };
}

/** Opens the deterministics model (export_deterministics(model, flat=True)) matching `layout`. */
export async function openDeterministics(ort, model, layout, sessionOptions) {
  const bytes = await modelBytes(model);
  const det = readLayout(bytes, 'pytensor-onnx.pymc.deterministics');
  const names = (v) => v.map((e) => `${e.name}[${e.shape}]`).join(', ');
  if (det.size !== layout.size || names(det.variables) !== names(layout.variables)) {
    throw new Error(`the deterministics model's layout (${names(det.variables)}) does not match the `
      + `log-density's (${names(layout.variables)}): export both from the same model`);
  }
  const session = await ort.InferenceSession.create(bytes, sessionOptions || {});
  const inputName = det.flat_input || 'point';
  return {
    layout: det,
    async evaluate(q) {
      const out = await session.run({ [inputName]: new ort.Tensor('float64', q, [layout.size]) });
      const values = {};
      for (const o of det.outputs) values[o.var] = { dims: Array.from(out[o.name].dims), data: out[o.name].data };
      return values;
    },
    release: () => session.release && session.release(),
  };
}

// ---------------------------------------------------------------------------------------------
// Hamiltonian dynamics with a diagonal metric: momentum p ~ N(0, M), M = diag(1 / invMass);
// kinetic energy p' M^-1 p / 2.

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i += 1) s += a[i] * b[i];
  return s;
}

function kinetic(p, invMass) {
  let s = 0;
  for (let i = 0; i < p.length; i += 1) s += p[i] * p[i] * invMass[i];
  return 0.5 * s;
}

function sharp(p, invMass) {
  const v = new Float64Array(p.length);
  for (let i = 0; i < p.length; i += 1) v[i] = p[i] * invMass[i];
  return v;
}

function sum(a, b) {
  const v = new Float64Array(a.length);
  for (let i = 0; i < a.length; i += 1) v[i] = a[i] + b[i];
  return v;
}

function logAddExp(a, b) {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

/** The generalized no-U-turn criterion: the trajectory keeps going while both ends move along rho. */
function noUTurn(sharpA, sharpB, rho) {
  return dot(sharpA, rho) > 0 && dot(sharpB, rho) > 0;
}

class Chain {
  constructor(target, rng, settings) {
    this.target = target;
    this.rng = rng;
    this.settings = settings;
    this.n = target.layout.size;
    this.invMass = new Float64Array(this.n).fill(1);
    this.stepSize = settings.initialStepSize;
  }

  async leapfrog(state, eps) {
    const { n, invMass } = this;
    const p = new Float64Array(n);
    const q = new Float64Array(n);
    for (let i = 0; i < n; i += 1) {
      p[i] = state.p[i] + 0.5 * eps * state.grad[i];
      q[i] = state.q[i] + eps * invMass[i] * p[i];
    }
    const { logp, grad } = await this.target.evaluate(q);
    for (let i = 0; i < n; i += 1) p[i] += 0.5 * eps * grad[i];
    return { q, p, grad, logp, sharp: sharp(p, invMass) };
  }

  momentum() {
    const p = new Float64Array(this.n);
    for (let i = 0; i < this.n; i += 1) p[i] = this.rng.normal() / Math.sqrt(this.invMass[i]);
    return p;
  }

  /** A subtree of 2^depth leapfrog steps of size eps (signed) from `from`. */
  async buildTree(from, depth, eps, H0, stats) {
    if (depth === 0) {
      const s = await this.leapfrog(from, eps);
      let H = -s.logp + kinetic(s.p, this.invMass);
      if (Number.isNaN(H)) H = Infinity;
      stats.nLeapfrog += 1;
      stats.sumAccept += H0 - H > 0 ? 1 : Math.exp(H0 - H);
      if (H - H0 > this.settings.maxEnergyError) {
        stats.divergent = true;
        return { valid: false };
      }
      return { valid: true, first: s, last: s, proposal: s, logW: H0 - H, rho: s.p, energy: H };
    }
    const inner = await this.buildTree(from, depth - 1, eps, H0, stats);
    if (!inner.valid) return inner;
    const outer = await this.buildTree(inner.last, depth - 1, eps, H0, stats);
    if (!outer.valid) return outer;
    const logW = logAddExp(inner.logW, outer.logW);
    // Multinomial sampling within the subtree: each half in proportion to its weight.
    const takeOuter = this.rng.uniform() < Math.exp(outer.logW - logW);
    const rho = sum(inner.rho, outer.rho);
    const valid = noUTurn(inner.first.sharp, outer.last.sharp, rho)
      && noUTurn(inner.first.sharp, outer.first.sharp, sum(inner.rho, outer.first.p))
      && noUTurn(inner.last.sharp, outer.last.sharp, sum(outer.rho, inner.last.p));
    return {
      valid,
      first: inner.first,
      last: outer.last,
      proposal: takeOuter ? outer.proposal : inner.proposal,
      energy: takeOuter ? outer.energy : inner.energy,
      logW,
      rho,
    };
  }

  /** One NUTS transition from `state` ({q, logp, grad}). */
  async transition(state) {
    const p = this.momentum();
    const start = { q: state.q, p, grad: state.grad, logp: state.logp, sharp: sharp(p, this.invMass) };
    const H0 = -state.logp + kinetic(p, this.invMass);
    let backward = start;
    let forward = start;
    let proposal = start;
    let energy = H0;
    let logW = 0;
    let rho = p;
    const stats = { nLeapfrog: 0, sumAccept: 0, divergent: false };
    let depth = 0;
    while (depth < this.settings.maxTreeDepth) {
      const direction = this.rng.uniform() < 0.5 ? -1 : 1;
      const end = direction > 0 ? forward : backward;
      const sub = await this.buildTree(end, depth, direction * this.stepSize, H0, stats);
      if (!sub.valid) break;
      depth += 1;
      // Biased progressive sampling: the new half wins with probability min(1, W_new / W_old).
      if (this.rng.uniform() < Math.exp(sub.logW - logW)) {
        proposal = sub.proposal;
        energy = sub.energy;
      }
      logW = logAddExp(logW, sub.logW);
      const oldRho = rho;
      rho = sum(rho, sub.rho);
      const far = direction > 0 ? backward : forward;
      if (direction > 0) forward = sub.last;
      else backward = sub.last;
      const turned = !(noUTurn(far.sharp, sub.last.sharp, rho)
        && noUTurn(far.sharp, sub.first.sharp, sum(oldRho, sub.first.p))
        && noUTurn(end.sharp, sub.last.sharp, sum(sub.rho, end.p)));
      if (turned) break;
    }
    return {
      state: { q: proposal.q, logp: proposal.logp, grad: proposal.grad },
      depth,
      nLeapfrog: stats.nLeapfrog,
      acceptance: stats.nLeapfrog > 0 ? stats.sumAccept / stats.nLeapfrog : 0,
      divergent: stats.divergent,
      energy,
    };
  }

  /** Stan's heuristic: double or halve the step size until one leapfrog's acceptance crosses 0.8. */
  async initialStepSize(state) {
    const logTarget = Math.log(0.8);
    let direction = 0;
    for (let k = 0; k < 200; k += 1) {
      const p = this.momentum();
      const H0 = -state.logp + kinetic(p, this.invMass);
      const s = await this.leapfrog({ ...state, p }, this.stepSize);
      let deltaH = H0 - (-s.logp + kinetic(s.p, this.invMass));
      if (Number.isNaN(deltaH)) deltaH = -Infinity;
      const up = deltaH > logTarget;
      if (direction === 0) direction = up ? 1 : -1;
      else if ((direction === 1) !== up) return;
      this.stepSize = direction === 1 ? this.stepSize * 2 : this.stepSize / 2;
      if (this.stepSize < 1e-12) {
        throw new Error('the sampler diverges everywhere: every leapfrog step from the current point gives a '
          + 'non-finite or far lower log-density, even at step size 1e-12');
      }
      if (this.stepSize > 1e7) {
        throw new Error('the step size grew beyond 1e7: the posterior looks improper (flat in some direction)');
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Warm-up: dual averaging of the log step size and Stan's windows for the metric.

class DualAveraging {
  constructor(targetAccept) {
    this.delta = targetAccept;
    this.gamma = 0.05;
    this.t0 = 10;
    this.kappa = 0.75;
  }

  restart(stepSize) {
    this.mu = Math.log(10 * stepSize);
    this.t = 0;
    this.hBar = 0;
    this.logBar = 0;
  }

  update(acceptance) {
    this.t += 1;
    const eta = 1 / (this.t + this.t0);
    this.hBar = (1 - eta) * this.hBar + eta * (this.delta - acceptance);
    const logStep = this.mu - (Math.sqrt(this.t) / this.gamma) * this.hBar;
    const weight = this.t ** -this.kappa;
    this.logBar = weight * logStep + (1 - weight) * this.logBar;
    return Math.exp(logStep);
  }

  final() {
    return Math.exp(this.logBar);
  }
}

/** Ends (exclusive iteration indices) of the slow windows in which the metric is estimated. */
export function metricWindows(tune) {
  if (tune < 20) return { start: tune, ends: [] };
  let init = 75;
  let term = 50;
  let base = 25;
  if (init + term + base > tune) {
    init = Math.floor(0.15 * tune);
    term = Math.floor(0.1 * tune);
    base = tune - init - term;
  }
  const ends = [];
  let start = init;
  let size = base;
  for (;;) {
    let end = start + size;
    if (end + 2 * size > tune - term) end = tune - term;
    ends.push(end);
    if (end >= tune - term) break;
    start = end;
    size *= 2;
  }
  return { start: init, ends };
}

class Variances {
  constructor(n) {
    this.n = n;
    this.reset();
  }

  reset() {
    this.count = 0;
    this.mean = new Float64Array(this.n);
    this.m2 = new Float64Array(this.n);
  }

  add(q) {
    this.count += 1;
    for (let i = 0; i < this.n; i += 1) {
      const d = q[i] - this.mean[i];
      this.mean[i] += d / this.count;
      this.m2[i] += d * (q[i] - this.mean[i]);
    }
  }

  /** The sample variances shrunk towards 1e-3 for short windows (Stan's regularization). */
  regularized() {
    const c = this.count;
    const out = new Float64Array(this.n);
    for (let i = 0; i < this.n; i += 1) {
      const variance = this.m2[i] / (c - 1);
      out[i] = (c / (c + 5)) * variance + 1e-3 * (5 / (c + 5));
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Chains.

function resolveSettings(options) {
  const settings = { ...DEFAULTS, ...options };
  for (const key of ['chains', 'tune', 'draws', 'maxTreeDepth', 'maxDivergentStreak', 'progressEvery']) {
    if (!Number.isInteger(settings[key]) || settings[key] < (key === 'tune' ? 0 : 1)) {
      throw new Error(`options.${key} must be a positive integer, got ${settings[key]}`);
    }
  }
  if (!(settings.targetAccept > 0 && settings.targetAccept < 1)) {
    throw new Error(`options.targetAccept must be in (0, 1), got ${settings.targetAccept}`);
  }
  if (!(settings.initialStepSize > 0)) throw new Error('options.initialStepSize must be positive');
  return settings;
}

function startingPoint(settings, chain, n) {
  const { init } = settings;
  if (init === undefined || init === null) return null;
  const point = Array.isArray(init[0]) || ArrayBuffer.isView(init[0]) ? init[chain] : init;
  if (!point || point.length !== n) {
    throw new Error(`options.init must hold ${n} unconstrained values (the layout's size) per chain`);
  }
  return Float64Array.from(point);
}

async function initialState(target, settings, chainIndex, rng) {
  const n = target.layout.size;
  const given = startingPoint(settings, chainIndex, n);
  const tries = given ? 1 : 100;
  let last;
  for (let k = 0; k < tries; k += 1) {
    const q = given || Float64Array.from({ length: n }, () => (2 * rng.uniform() - 1) * settings.jitter);
    last = await target.evaluate(q);
    if (Number.isFinite(last.logp) && last.grad.every(Number.isFinite)) return { q, ...last };
  }
  const what = Number.isFinite(last.logp) ? 'its gradient is not finite' : `the log-density is ${last.logp}`;
  throw new Error(given
    ? `chain ${chainIndex}: ${what} at the starting point (options.init): the model cannot be sampled from there`
    : `chain ${chainIndex}: ${what} at 100 random starting points in (-${settings.jitter}, ${settings.jitter}): `
      + 'give options.init');
}

/**
 * Runs one chain; returns its unconstrained draws (Float64Array, draws x size, row-major) and
 * sampler statistics. `onProgress({chain, iteration, total, tuning, divergences})` is called every
 * `progressEvery` iterations.
 */
export async function runChain(target, options, chainIndex, onProgress) {
  const settings = resolveSettings(options);
  const rng = new Random(settings.seed, chainIndex);
  const n = target.layout.size;
  const chain = new Chain(target, rng, settings);
  let state = await initialState(target, settings, chainIndex, rng);
  await chain.initialStepSize(state);
  const adaptation = new DualAveraging(settings.targetAccept);
  adaptation.restart(chain.stepSize);
  const windows = metricWindows(settings.tune);
  const variances = new Variances(n);
  let window = 0;
  const { tune, draws } = settings;
  const out = {
    chain: chainIndex,
    draws: new Float64Array(draws * n),
    logp: new Float64Array(draws),
    stepSize: new Float64Array(draws),
    treeDepth: new Int32Array(draws),
    nLeapfrog: new Int32Array(draws),
    acceptance: new Float64Array(draws),
    diverging: new Uint8Array(draws),
    energy: new Float64Array(draws),
    tuneDivergences: 0,
  };
  let streak = 0;
  for (let it = 0; it < tune + draws; it += 1) {
    const t = await chain.transition(state);
    state = t.state;
    streak = t.divergent ? streak + 1 : 0;
    if (streak >= settings.maxDivergentStreak) {
      throw new Error(`chain ${chainIndex}: the sampler diverges everywhere: ${streak} transitions in a row diverged `
        + `(iteration ${it}, step size ${chain.stepSize.toExponential(2)}); the posterior cannot be explored `
        + '(reparameterize the model, or check that its log-density is finite where it should be)');
    }
    if (it < tune) {
      if (t.divergent) out.tuneDivergences += 1;
      chain.stepSize = adaptation.update(t.acceptance);
      if (window < windows.ends.length && it >= windows.start) {
        variances.add(state.q);
        if (it + 1 === windows.ends[window]) {
          chain.invMass = variances.regularized();
          variances.reset();
          window += 1;
          await chain.initialStepSize(state);
          adaptation.restart(chain.stepSize);
        }
      }
      if (it + 1 === tune) chain.stepSize = adaptation.final();
    } else {
      const d = it - tune;
      out.draws.set(state.q, d * n);
      out.logp[d] = state.logp;
      out.stepSize[d] = chain.stepSize;
      out.treeDepth[d] = t.depth;
      out.nLeapfrog[d] = t.nLeapfrog;
      out.acceptance[d] = t.acceptance;
      out.diverging[d] = t.divergent ? 1 : 0;
      out.energy[d] = t.energy;
    }
    if (onProgress && ((it + 1) % settings.progressEvery === 0 || it + 1 === tune + draws)) {
      onProgress({ chain: chainIndex, iteration: it + 1, total: tune + draws, tuning: it < tune,
        divergences: out.tuneDivergences + out.diverging.reduce((a, b) => a + b, 0) });
    }
  }
  out.invMass = chain.invMass;
  out.finalStepSize = chain.stepSize;
  return out;
}

/** The draws of one chain per variable, on the constrained scale when `deterministics` is given. */
export async function constrain(layout, chainOut, deterministics) {
  const n = layout.size;
  const draws = chainOut.logp.length;
  const variables = {};
  const put = (name, shape, d, values) => {
    if (!variables[name]) {
      const size = shape.reduce((a, b) => a * b, 1);
      variables[name] = { shape: [...shape], data: new Float64Array(draws * size) };
    }
    const v = variables[name];
    v.data.set(values, d * (v.data.length / draws));
  };
  for (let d = 0; d < draws; d += 1) {
    const q = chainOut.draws.subarray(d * n, (d + 1) * n);
    const transformed = deterministics ? await deterministics.evaluate(Float64Array.from(q)) : {};
    for (const v of layout.variables) {
      // Untransformed variables are their own values; transformed ones come from the deterministics model.
      if (deterministics && v.transform !== null && v.transform !== undefined) continue;
      put(v.name, v.shape, d, q.subarray(v.offset, v.offset + v.size));
    }
    for (const [name, value] of Object.entries(transformed)) put(name, value.dims, d, value.data);
  }
  return variables;
}

/**
 * Puts chains together: {posterior: {name: {dims: [chains, draws, ...shape], data}}, stats,
 * diagnostics: {name: {rhat: [...], essBulk: [...]}} (per element of the variable)}.
 */
export function assemble(layout, chainResults) {
  chainResults = [...chainResults].sort((a, b) => a.chain - b.chain);
  const chains = chainResults.length;
  const draws = chainResults[0].logp.length;
  const posterior = {};
  const diagnostics = {};
  for (const name of Object.keys(chainResults[0].variables)) {
    const { shape } = chainResults[0].variables[name];
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float64Array(chains * draws * size);
    chainResults.forEach((c, k) => data.set(c.variables[name].data, k * draws * size));
    posterior[name] = { dims: [chains, draws, ...shape], data };
    const rhat = [];
    const ess = [];
    for (let e = 0; e < size; e += 1) {
      const perChain = chainResults.map((c) => {
        const x = new Float64Array(draws);
        for (let d = 0; d < draws; d += 1) x[d] = c.variables[name].data[d * size + e];
        return x;
      });
      rhat.push(rhatRank(perChain));
      ess.push(essBulk(perChain));
    }
    diagnostics[name] = { rhat, essBulk: ess };
  }
  const stat = (key) => chainResults.map((c) => Array.from(c[key]));
  const stats = {
    stepSize: chainResults.map((c) => c.finalStepSize),
    treeDepth: stat('treeDepth'),
    nLeapfrog: stat('nLeapfrog'),
    acceptance: stat('acceptance'),
    diverging: stat('diverging'),
    energy: stat('energy'),
    logp: stat('logp'),
    invMass: chainResults.map((c) => Array.from(c.invMass)),
    divergences: chainResults.reduce((a, c) => a + c.diverging.reduce((x, y) => x + y, 0), 0),
    tuneDivergences: chainResults.reduce((a, c) => a + c.tuneDivergences, 0),
  };
  return { posterior, stats, diagnostics, layout };
}

/**
 * Runs `chainIds` chains (one after another) and returns their per-chain results with the
 * variables: what a Web Worker does for its share of the chains.
 */
export async function runChains(ort, logpModel, options = {}, chainIds = null) {
  const settings = resolveSettings(options);
  const target = await openTarget(ort, logpModel, { data: options.data, sessionOptions: options.sessionOptions });
  let deterministics = null;
  try {
    if (options.deterministics) {
      deterministics = await openDeterministics(ort, options.deterministics, target.layout, options.sessionOptions);
    }
    const ids = chainIds || Array.from({ length: settings.chains }, (_, k) => k);
    const results = [];
    for (const k of ids) {
      const out = await runChain(target, settings, k, options.onProgress);
      out.variables = await constrain(target.layout, out, deterministics);
      results.push(out);
    }
    return { layout: target.layout, results };
  } finally {
    await target.release();
    if (deterministics) await deterministics.release();
  }
}

/**
 * Samples the posterior of an exported model:
 *
 *   const fit = await sample(ort, 'logp.onnx', {deterministics: 'det.onnx', chains: 4, seed: 1});
 *   fit.posterior.mu  // {dims: [4, 1000], data: Float64Array}
 *
 * `ort` is onnxruntime-node or onnxruntime-web; models are bytes or paths (Node) / URLs (page).
 * Rejects with an Error naming the cause when the model or options are unusable or the sampler
 * cannot move.
 */
export async function sample(ort, logpModel, options = {}) {
  const { layout, results } = await runChains(ort, logpModel, options);
  return assemble(layout, results);
}
