// The statistics of eval and report: Wilson score intervals, the unbiased pass@k estimator,
// the exact McNemar test, and latency percentiles. Distributions come from jstat.
import jStat from "jstat";

export interface Interval {
  low: number;
  high: number;
}

/** Wilson score interval for `success` out of `n` (Wilson 1927); n = 0 says nothing: [0, 1]. */
export function wilson(success: number, n: number, confidence = 0.95): Interval {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`wilson: n must be a whole number >= 0, got ${n}`);
  if (!(success >= 0 && success <= n)) throw new RangeError(`wilson: success must be in [0, ${n}], got ${success}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`wilson: confidence must be in (0, 1), got ${confidence}`);
  if (n === 0) return { low: 0, high: 1 };
  const z = jStat.normal.inv(1 - (1 - confidence) / 2, 0, 1);
  const p = success / n;
  const z2n = (z * z) / n;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  // Clamp the rounding noise at the ends (success = 0 or n gives exactly 0 or 1 in exact arithmetic).
  return { low: success === 0 ? 0 : Math.max(0, center - half), high: success === n ? 1 : Math.min(1, center + half) };
}

/**
 * Unbiased pass@k of one task with n samples of which c are correct: 1 - C(n-c, k) / C(n, k)
 * (Chen et al. 2021), as the product 1 - prod_{i=n-c+1..n} (1 - k/i) so that no binomial
 * coefficient is ever formed.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`passAtK: n must be a whole number >= 1, got ${n}`);
  if (!Number.isInteger(c) || c < 0 || c > n) throw new RangeError(`passAtK: c must be a whole number in [0, ${n}], got ${c}`);
  if (!Number.isInteger(k) || k < 1 || k > n) throw new RangeError(`passAtK: k must be a whole number in [1, ${n}], got ${k}`);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/** pass@k averaged over tasks; every task must have at least k samples. */
export function meanPassAtK(tasks: { n: number; c: number }[], k: number): number {
  if (tasks.length === 0) return 0;
  return tasks.reduce((sum, t) => sum + passAtK(t.n, t.c, k), 0) / tasks.length;
}

export interface McNemar {
  /** Pairs where only the first run succeeded. */
  b: number;
  /** Pairs where only the second run succeeded. */
  c: number;
  /** Two-sided exact p-value: the discordant pairs against Binomial(b + c, 1/2). */
  p: number;
}

/** Exact (conditional) McNemar test on the discordant pair counts b and c. */
export function mcnemarExact(b: number, c: number): McNemar {
  for (const [name, v] of [["b", b], ["c", c]] as const)
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`mcnemarExact: ${name} must be a whole number >= 0, got ${v}`);
  const n = b + c;
  if (n === 0) return { b, c, p: 1 };
  return { b, c, p: Math.min(1, 2 * jStat.binomial.cdf(Math.min(b, c), n, 0.5)) };
}

/** Linear-interpolation quantiles (numpy's default); undefined for no values. */
export function quantiles(values: number[], probabilities: number[]): number[] | undefined {
  if (values.length === 0) return undefined;
  if (values.length === 1) return probabilities.map(() => values[0]!);
  return jStat.quantiles(values, probabilities, 1, 1);
}
