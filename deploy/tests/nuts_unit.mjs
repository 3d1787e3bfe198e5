// Unit tests of deploy/nuts without ONNX Runtime (targets written in JavaScript):
//   node --test deploy/tests/nuts_unit.mjs     (test_nuts.py runs it)
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { metricWindows, Random, readMetadata, runChain } from '../nuts/nuts.mjs';
import { essBulk, normalQuantile, rhatRank } from '../nuts/diagnostics.mjs';

/** A target of the shape openTarget returns: an independent normal of the given means and sds. */
function normalTarget(means, sds) {
  const n = means.length;
  return {
    layout: { size: n, variables: [{ name: 'x', shape: [n], size: n, offset: 0, transform: null }] },
    calls: 0,
    async evaluate(q) {
      this.calls += 1;
      let logp = 0;
      const grad = new Float64Array(n);
      for (let i = 0; i < n; i += 1) {
        const z = (q[i] - means[i]) / sds[i];
        logp -= 0.5 * z * z;
        grad[i] = -z / sds[i];
      }
      return { logp, grad };
    },
  };
}

test('the generator is reproducible, its streams differ, its moments are right', () => {
  const a = new Random(42, 0);
  const b = new Random(42, 0);
  const c = new Random(42, 1);
  const xs = Array.from({ length: 20000 }, () => a.uniform());
  assert.deepEqual(xs.slice(0, 5), Array.from({ length: 5 }, () => b.uniform()));
  assert.notEqual(xs[0], c.uniform());
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.01, `uniform mean ${mean}`);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const zs = Array.from({ length: 20000 }, () => a.normal());
  const zMean = zs.reduce((s, x) => s + x, 0) / zs.length;
  const zVar = zs.reduce((s, x) => s + (x - zMean) ** 2, 0) / zs.length;
  assert.ok(Math.abs(zMean) < 0.03 && Math.abs(zVar - 1) < 0.04, `normal mean ${zMean} var ${zVar}`);
  assert.throws(() => new Random(-1), /seed must be a non-negative integer/);
});

test("Stan's warm-up windows", () => {
  assert.deepEqual(metricWindows(1000), { start: 75, ends: [100, 150, 250, 450, 950] });
  assert.deepEqual(metricWindows(500), { start: 75, ends: [100, 150, 250, 450] });
  // Too short for the default buffers: 15% / 75% / 10%.
  assert.deepEqual(metricWindows(100), { start: 15, ends: [90] });
  assert.deepEqual(metricWindows(10), { start: 10, ends: [] });
});

test('NUTS recovers a badly scaled normal (the metric adapts)', async () => {
  const means = [1, -3, 100];
  const sds = [0.01, 1, 30];
  const target = normalTarget(means, sds);
  const chains = [];
  for (let k = 0; k < 4; k += 1) {
    chains.push(await runChain(target, { tune: 400, draws: 600, seed: 5, init: [1, -3, 100] }, k));
  }
  for (let i = 0; i < 3; i += 1) {
    const perChain = chains.map((c) => Float64Array.from({ length: 600 }, (_, d) => c.draws[d * 3 + i]));
    const all = perChain.flatMap((x) => Array.from(x));
    const mean = all.reduce((s, x) => s + x, 0) / all.length;
    const sd = Math.sqrt(all.reduce((s, x) => s + (x - mean) ** 2, 0) / (all.length - 1));
    const ess = essBulk(perChain);
    // 5 Monte-Carlo standard errors of the mean; the sd within 10%.
    assert.ok(Math.abs(mean - means[i]) < (5 * sds[i]) / Math.sqrt(ess), `x[${i}] mean ${mean}, ess ${ess}`);
    assert.ok(Math.abs(sd / sds[i] - 1) < 0.1, `x[${i}] sd ${sd}`);
    assert.ok(rhatRank(perChain) < 1.01);
    // The adapted inverse metric is the posterior variance.
    for (const c of chains) assert.ok(Math.abs(c.invMass[i] / sds[i] ** 2 - 1) < 0.5, `invMass ${c.invMass[i]}`);
  }
  assert.equal(chains.reduce((s, c) => s + c.diverging.reduce((a, b) => a + b, 0), 0), 0);
});

test('a sampler that starts well and then diverges everywhere stops with the reason', async () => {
  const target = normalTarget([0], [1]);
  const inner = target.evaluate.bind(target);
  // Finite for the start and the first step-size search (a few calls), then -Infinity everywhere.
  target.evaluate = async (q) => (target.calls < 10 ? inner(q) : (target.calls += 1, { logp: -Infinity, grad: new Float64Array(1) }));
  await assert.rejects(runChain(target, { tune: 200, draws: 50, seed: 1, init: [0.1], maxDivergentStreak: 50 }, 0),
    /chain 0: the sampler diverges everywhere: 50 transitions in a row diverged/);
});

test('options are checked', async () => {
  const target = normalTarget([0], [1]);
  await assert.rejects(runChain(target, { draws: 0 }, 0), /options.draws must be a positive integer/);
  await assert.rejects(runChain(target, { targetAccept: 1.5 }, 0), /targetAccept must be in \(0, 1\)/);
  await assert.rejects(runChain(target, { init: [1, 2] }, 0), /options.init must hold 1 unconstrained values/);
});

test('metadata is read from the ONNX bytes; other bytes are refused', () => {
  // ModelProto {7: graph (empty), 14: {1: "k", 2: "v"}}
  const bytes = Uint8Array.from([0x3a, 0x00, 0x72, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76]);
  assert.deepEqual(readMetadata(bytes), { k: 'v' });
  assert.throws(() => readMetadata(new TextEncoder().encode('{"jobs": []}')), /not an ONNX model/);
});

test('normal quantiles', () => {
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959963984540054) < 1e-13);
  assert.ok(Math.abs(normalQuantile(1e-10) + 6.361340902404056) < 1e-11);
});
