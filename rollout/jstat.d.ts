// The parts of jstat (no published types) that rollout/stats.ts uses.
declare module "jstat" {
  interface JStat {
    normal: { inv(p: number, mean: number, std: number): number };
    binomial: { cdf(k: number, n: number, p: number): number; pdf(k: number, n: number, p: number): number };
    /** Hyndman-Fan quantiles; alphap = betap = 1 is type 7 (linear interpolation, numpy's default). */
    quantiles(values: number[], probabilities: number[], alphap?: number, betap?: number): number[];
  }
  const jStat: JStat;
  export default jStat;
}
