// Convergence diagnostics of several chains, as Vehtari, Gelman, Simpson, Carpenter & Bürkner
// (2021), "Rank-normalization, folding, and localization: an improved R-hat", Bayesian Analysis
// 16(2), define them and ArviZ reports them: rank-normalized split R-hat (the larger of the bulk
// and the folded one) and bulk effective sample size (split chains, rank-normalized, Geyer's
// initial monotone sequence of autocorrelation pairs). Each function takes an array of chains
// (arrays of equal length) of one scalar quantity.

/** Standard normal CDF; erf by its Taylor series near 0, erfc by its continued fraction beyond. */
function normalCdf(x) {
  const z = Math.abs(x) / Math.SQRT2;
  let tail; // P(Z > |x|) = erfc(z) / 2
  if (z < 2.5) {
    let term = z;
    let total = z;
    for (let n = 1; n < 200; n += 1) {
      term *= (-z * z) / n;
      const add = term / (2 * n + 1);
      total += add;
      if (Math.abs(add) < 1e-17 * Math.abs(total)) break;
    }
    tail = 0.5 * (1 - (2 / Math.sqrt(Math.PI)) * total);
  } else {
    // erfc(z) = exp(-z^2)/sqrt(pi) * 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + ...)))), by modified Lentz.
    const tiny = 1e-300;
    let f = z;
    let c = z;
    let d = 0;
    for (let k = 1; k < 500; k += 1) {
      const a = k / 2;
      d = z + a * d;
      d = d === 0 ? tiny : d;
      c = z + a / c;
      c = c === 0 ? tiny : c;
      d = 1 / d;
      const delta = c * d;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) break;
    }
    tail = (0.5 * Math.exp(-z * z)) / (Math.sqrt(Math.PI) * f);
  }
  return x >= 0 ? 1 - tail : tail;
}

/** Standard normal quantile: Newton's method on normalCdf from a logistic starting guess. */
export function normalQuantile(p) {
  if (!(p > 0 && p < 1)) {
    if (p === 0) return -Infinity;
    if (p === 1) return Infinity;
    return NaN;
  }
  if (p > 0.5) return -normalQuantile(1 - p);
  let x = -Math.sqrt(-2 * Math.log(p)); // for the lower tail
  x = Math.max(x, Math.log(p / (1 - p)) / 1.702);
  for (let k = 0; k < 100; k += 1) {
    const density = Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
    const step = (normalCdf(x) - p) / density;
    x -= step;
    if (Math.abs(step) < 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}

/** Each chain split into its first and last halves (the middle draw of an odd length is dropped). */
function splitChains(chains) {
  const half = Math.floor(chains[0].length / 2);
  const out = [];
  for (const c of chains) {
    out.push(c.slice(0, half));
    out.push(c.slice(c.length - half));
  }
  return out;
}

/** Normal scores of the pooled ranks (average ranks for ties; Blom's offset 3/8). */
function rankNormalize(chains) {
  const m = chains.length;
  const n = chains[0].length;
  const total = m * n;
  const values = new Float64Array(total);
  chains.forEach((c, k) => values.set(c, k * n));
  const order = Array.from({ length: total }, (_, i) => i).sort((a, b) => values[a] - values[b]);
  const ranks = new Float64Array(total);
  for (let i = 0; i < total;) {
    let j = i;
    while (j + 1 < total && values[order[j + 1]] === values[order[i]]) j += 1;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k += 1) ranks[order[k]] = rank;
    i = j + 1;
  }
  const out = [];
  for (let k = 0; k < m; k += 1) {
    const z = new Float64Array(n);
    for (let i = 0; i < n; i += 1) z[i] = normalQuantile((ranks[k * n + i] - 3 / 8) / (total + 1 / 4));
    out.push(z);
  }
  return out;
}

function mean(x) {
  let s = 0;
  for (let i = 0; i < x.length; i += 1) s += x[i];
  return s / x.length;
}

function variance(x) {
  const mu = mean(x);
  let s = 0;
  for (let i = 0; i < x.length; i += 1) s += (x[i] - mu) * (x[i] - mu);
  return s / (x.length - 1);
}

function median(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/** Gelman-Rubin potential scale reduction of (already split) chains. */
function rhatOf(chains) {
  const n = chains[0].length;
  const means = chains.map(mean);
  const within = mean(chains.map(variance));
  const between = n * variance(means);
  const pooled = ((n - 1) / n) * within + between / n;
  return Math.sqrt(pooled / within);
}

function allFinite(chains) {
  return chains.every((c) => c.every(Number.isFinite));
}

function isConstant(chains) {
  const first = chains[0][0];
  return chains.every((c) => c.every((v) => v === first));
}

/** Rank-normalized split R-hat: the larger of the bulk R-hat and the R-hat of |x - median|. */
export function rhatRank(chains) {
  if (chains.length < 1 || chains[0].length < 4 || !allFinite(chains) || isConstant(chains)) return NaN;
  const split = splitChains(chains);
  const bulk = rhatOf(rankNormalize(split));
  const center = median(split.flatMap((c) => Array.from(c)));
  const folded = split.map((c) => c.map((v) => Math.abs(v - center)));
  const tail = rhatOf(rankNormalize(folded));
  return Math.max(bulk, tail);
}

/** Autocovariance at lag `lag` of a chain (divided by its length). */
function autocovariance(x, mu, lag) {
  let s = 0;
  for (let i = 0; i + lag < x.length; i += 1) s += (x[i] - mu) * (x[i + lag] - mu);
  return s / x.length;
}

/** Effective sample size of (already split and transformed) chains: Geyer's initial monotone sequence. */
function essOf(chains) {
  const m = chains.length;
  const n = chains[0].length;
  const means = chains.map(mean);
  const chainVariances = chains.map((c, k) => (autocovariance(c, means[k], 0) * n) / (n - 1));
  const meanVariance = mean(chainVariances);
  let pooled = (meanVariance * (n - 1)) / n;
  if (m > 1) pooled += variance(means);
  // rho_t = 1 - (W - mean autocovariance at t) / var+; summed in pairs while a pair stays positive.
  const rho = (t) => 1 - (meanVariance - mean(chains.map((c, k) => autocovariance(c, means[k], t)))) / pooled;
  const rhos = new Float64Array(n);
  rhos[0] = 1;
  rhos[1] = rho(1);
  let t = 1;
  let even = rhos[0];
  let odd = rhos[1];
  while (t < n - 3 && even + odd > 0) {
    even = rho(t + 1);
    odd = rho(t + 2);
    if (even + odd >= 0) {
      rhos[t + 1] = even;
      rhos[t + 2] = odd;
    }
    t += 2;
  }
  const last = t - 2;
  // The even term after the last positive pair, when positive, is kept (less variance for
  // antithetic chains).
  if (even > 0) rhos[last + 1] = even;
  // Monotone: no pair larger than the pair before it.
  for (let k = 1; k + 2 <= last; k += 2) {
    const before = rhos[k - 1] + rhos[k];
    if (rhos[k + 1] + rhos[k + 2] > before) {
      rhos[k + 1] = before / 2;
      rhos[k + 2] = before / 2;
    }
  }
  let tau = -1 + rhos[last + 1];
  for (let k = 0; k <= last; k += 1) tau += 2 * rhos[k];
  const draws = m * n;
  tau = Math.max(tau, 1 / Math.log10(draws));
  return draws / tau;
}

/** Bulk effective sample size: of the rank-normalized split chains. */
export function essBulk(chains) {
  if (chains.length < 1 || chains[0].length < 4 || !allFinite(chains)) return NaN;
  if (isConstant(chains)) return NaN;
  return essOf(rankNormalize(splitChains(chains)));
}

/** Effective sample size of the mean (split chains, no rank normalization). */
export function essMean(chains) {
  if (chains.length < 1 || chains[0].length < 4 || !allFinite(chains) || isConstant(chains)) return NaN;
  return essOf(splitChains(chains));
}
