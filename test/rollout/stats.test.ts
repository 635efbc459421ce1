// The statistics against published worked values and hand computations (sources in comments).
import { describe, expect, it } from "vitest";
import { mcnemarExact, meanPassAtK, passAtK, quantiles, wilson } from "../../rollout/stats.ts";

describe("Wilson score interval", () => {
  // Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of
  // seven methods", Statistics in Medicine 17:857-872, Table II, method 3 (score, no continuity
  // correction), 95%: 81/263, 15/148, 0/20, 1/29.
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("%i/%i -> [%f, %f] (Newcombe 1998, Table II)", (s, n, low, high) => {
    const ci = wilson(s, n);
    expect(ci.low).toBeCloseTo(low, 4);
    expect(ci.high).toBeCloseTo(high, 4);
  });

  it("hand value: 6/12 -> 0.5 -/+ 0.2462 (z = 1.95996, center 0.5, half = z/(1+z^2/n) * sqrt(p(1-p)/n + z^2/4n^2))", () => {
    const ci = wilson(6, 12);
    expect(ci.low).toBeCloseTo(0.2538, 4);
    expect(ci.high).toBeCloseTo(0.7462, 4);
  });

  it("all successes reach 1 exactly; no episodes say nothing", () => {
    expect(wilson(20, 20).high).toBe(1);
    expect(wilson(20, 20).low).toBeCloseTo(1 - 0.1611, 4); // mirror of 0/20 above
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it("rejects impossible counts naming the value", () => {
    expect(() => wilson(5, 3)).toThrow(/success must be in \[0, 3\], got 5/);
    expect(() => wilson(1, 2.5)).toThrow(/n must be a whole number/);
  });
});

describe("unbiased pass@k", () => {
  // Chen et al. (2021), "Evaluating Large Language Models Trained on Code", eq. 1:
  // pass@k = E[1 - C(n-c, k) / C(n, k)]; the expected values below are those binomials by hand.
  it.each([
    [5, 2, 2, 1 - 3 / 10], // C(3,2)=3, C(5,2)=10
    [10, 3, 5, 1 - 21 / 252], // C(7,5)=21, C(10,5)=252
    [4, 2, 1, 0.5], // pass@1 = c/n
    [4, 0, 3, 0],
    [5, 4, 2, 1], // n-c < k: every draw of 2 holds a correct one
    [200, 1, 100, 0.5], // C(199,100)/C(200,100) = (200-100)/200
    [1000, 2, 10, 1 - (990 * 989) / (1000 * 999)], // C(998,10)/C(1000,10)
  ])("n=%i c=%i k=%i -> %f", (n, c, k, expected) => {
    expect(passAtK(n, c, k)).toBeCloseTo(expected, 12);
  });

  it("averages over tasks", () => {
    // (1 - 1/6) for n=4,c=2,k=2 (C(2,2)=1, C(4,2)=6); 0 and 1 for the others.
    expect(meanPassAtK([{ n: 4, c: 0 }, { n: 4, c: 2 }, { n: 4, c: 4 }], 2)).toBeCloseTo((0 + 5 / 6 + 1) / 3, 12);
  });

  it("rejects k beyond the samples", () => {
    expect(() => passAtK(3, 1, 4)).toThrow(/k must be a whole number in \[1, 3\], got 4/);
  });
});

describe("exact McNemar test", () => {
  // Fagerland, Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data: mid-p and
  // asymptotic are better than exact conditional", BMC Med Res Methodol 13:91: the Bentur et al.
  // airway hyper-responsiveness data, discordant pairs 1 and 7, exact conditional p = 0.070
  // (by hand: 2 * (C(8,0) + C(8,1)) / 2^8 = 18/256).
  it("Bentur et al. data: b=1, c=7 -> p = 0.0703", () => {
    expect(mcnemarExact(1, 7).p).toBeCloseTo(0.0703125, 8);
    expect(mcnemarExact(7, 1).p).toBeCloseTo(0.0703125, 8);
  });

  it.each([
    [0, 10, 2 / 1024], // 2 * 0.5^10
    [2, 10, (2 * (1 + 12 + 66)) / 4096], // 2 * (C(12,0)+C(12,1)+C(12,2)) / 2^12
    [3, 3, 1], // equal counts: capped at 1
    [0, 0, 1], // no discordant pairs: no evidence
  ])("b=%i c=%i -> p=%f (by hand)", (b, c, p) => {
    expect(mcnemarExact(b, c).p).toBeCloseTo(p, 9);
  });
});

describe("quantiles", () => {
  // numpy.percentile([1, 2, 3, 4], [50, 95]) with its default linear method: 2.5 and 3.85.
  it("interpolate linearly like numpy's default", () => {
    expect(quantiles([4, 1, 3, 2], [0.5, 0.95])![0]).toBeCloseTo(2.5, 12);
    expect(quantiles([4, 1, 3, 2], [0.5, 0.95])![1]).toBeCloseTo(3.85, 12);
    expect(quantiles([7], [0.5, 0.95])).toEqual([7, 7]);
    expect(quantiles([], [0.5])).toBeUndefined();
  });
});
