// Runs the cases written by export_cases.py with whichever ONNX Runtime
// binding it is given (onnxruntime-node, or onnxruntime-web in Node or in a
// browser page) and returns what each model computed, encoded like the
// cases (dtype, dims, flat data; non-finite floats as strings). The Python
// tests (deploy/tests) compare the results with PyTensor's numbers: this
// module only runs models, it judges nothing.

const TYPED_ARRAYS = {
  float64: Float64Array,
  float32: Float32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

function decodeNumber(value) {
  if (value === 'NaN') return NaN;
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  return value;
}

/** A case's encoded array as an ort.Tensor. */
export function toTensor(ort, encoded) {
  const { dtype, dims, data } = encoded;
  const Typed = TYPED_ARRAYS[dtype];
  if (Typed === undefined) throw new Error(`no ONNX Runtime JS tensor type for ${dtype}`);
  let values;
  if (dtype === 'int64' || dtype === 'uint64') values = data.map((v) => BigInt(v));
  else if (dtype === 'bool') values = data.map((v) => (v ? 1 : 0));
  else values = data.map(decodeNumber);
  return new ort.Tensor(dtype, Typed.from(values), dims);
}

/** An ort.Tensor as JSON (64-bit integers as strings when Number would round them). */
export function fromTensor(tensor) {
  const values = Array.from(tensor.data, (v) => {
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
    if (tensor.type === 'bool') return Boolean(v);
    return v;
  });
  return { dtype: tensor.type, dims: Array.from(tensor.dims), data: values };
}

/** The fastest of `repeats` runs of `session` on `feeds`, in milliseconds. */
async function bestRunMs(session, feeds, repeats) {
  let best = Infinity;
  for (let i = 0; i < repeats; i += 1) {
    const start = performance.now();
    await session.run(feeds);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/**
 * Runs every case. `loadModel(case)` returns what `ort.InferenceSession.create`
 * accepts (a path in Node, the model's bytes in a page). Returns
 * {case name: {outputs: {name: encoded}, ms: run time} or {error: message}}.
 * With `repeats` > 0 (benchmarks: bench/pymc_logp.py) the first run is a
 * warm-up and `bestMs` is the fastest of `repeats` more runs.
 */
export async function runCases(ort, cases, loadModel, sessionOptions = {}, repeats = 0) {
  const results = {};
  for (const testCase of cases) {
    try {
      const session = await ort.InferenceSession.create(await loadModel(testCase), sessionOptions);
      const feeds = {};
      for (const [name, encoded] of Object.entries(testCase.feeds)) feeds[name] = toTensor(ort, encoded);
      const start = performance.now();
      const outputs = await session.run(feeds);
      const ms = performance.now() - start;
      const encoded = {};
      for (const [name, tensor] of Object.entries(outputs)) encoded[name] = fromTensor(tensor);
      results[testCase.name] = { outputs: encoded, ms };
      if (repeats > 0) results[testCase.name].bestMs = await bestRunMs(session, feeds, repeats);
      if (session.release) await session.release();
    } catch (error) {
      results[testCase.name] = { error: String(error && error.message ? error.message : error).split('\n')[0] };
    }
  }
  return results;
}
