// summarize() on a hand-built run with several samples per task, usage and turn latencies:
// every number below is computed by hand in the comments.
import { describe, expect, it } from "vitest";
import { formatSummary, summarize, type RowLike } from "../../rollout/index.ts";

type Spec = [task: string, type: string, rewards: number[], statuses: string[], rounds: number[]];
const SPEC: Spec[] = [
  ["q1", "task1", [0, 0, 0, 0], ["limit_reached", "limit_reached", "invalid_action", "model_error"], [8, 8, 2, 1]],
  ["q2", "task1", [1, 0, 1, 0], ["completed", "completed", "completed", "completed"], [3, 3, 3, 3]],
  ["a1", "task5", [1, 1, 1, 1], ["completed", "completed", "completed", "completed"], [4, 4, 4, 4]],
];
const Q2_LATENCY = [300, 400, 500, 1000];

const rows: RowLike[] = SPEC.flatMap(([task, type, rewards, statuses, rounds]) =>
  rewards.map((reward, sample) => ({
    task_id: task,
    suite: "mab-v1",
    type,
    sample,
    protocol: "tools",
    policy: { model: "m" },
    reward,
    status: statuses[sample]!,
    rounds: rounds[sample]!,
    checks: [],
    ...(task === "q1" ? {} : { usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }),
    ...(task === "a1" ? { turns: [{ latency_ms: 100 }, { latency_ms: 200 }] } : {}),
    ...(task === "q2" ? { turns: [{ latency_ms: Q2_LATENCY[sample]! }] } : {}),
  })),
);

describe("summarize", () => {
  const s = summarize(rows);

  it("rates with Wilson intervals per group", () => {
    expect(s.overall).toMatchObject({ n: 12, success: 6, rate: 0.5, tasks: 3 });
    // Wilson 6/12: center 0.5, half = 1.95996/(1 + 3.84146/12) * sqrt(0.25/12 + 3.84146/576) = 0.24622
    expect(s.overall.ci.low).toBeCloseTo(0.2538, 4);
    expect(s.overall.ci.high).toBeCloseTo(0.7462, 4);
    // query = q1 + q2: 2/8. center (0.25 + 0.24009)/1.48018 = 0.33110, half 1.32414 * sqrt(0.0234375 + 0.0150057) = 0.25962
    expect(s.byKind.query).toMatchObject({ n: 8, success: 2, tasks: 2 });
    expect(s.byKind.query.ci.low).toBeCloseTo(0.0715, 4);
    expect(s.byKind.query.ci.high).toBeCloseTo(0.5907, 4);
    expect(s.byKind.action).toMatchObject({ n: 4, success: 4, rate: 1, ci: { high: 1 } });
    expect(s.bySuite.map((x) => [x.suite, x.rate.n])).toEqual([["mab-v1", 12]]);
    expect(s.byType.map((t) => [t.type, t.rate.success, t.rate.n])).toEqual([["task1", 2, 8], ["task5", 4, 4]]);
  });

  it("pass@1 is the mean reward and pass@k the unbiased estimator, averaged over tasks", () => {
    expect(s.samples).toBe(4);
    expect(s.overall.pass1).toBeCloseTo(0.5, 6);
    // per task c = 0, 2, 4 of n = 4. pass@2: 0, 1 - C(2,2)/C(4,2) = 5/6, 1. pass@3 and @4: 0, 1, 1.
    const k = Object.fromEntries(s.overall.passAtK!.map((p) => [p.k, p.value]));
    expect(Object.keys(k)).toEqual(["1", "2", "3", "4"]);
    expect(k[1]).toBeCloseTo(0.5, 6);
    expect(k[2]).toBeCloseTo((0 + 5 / 6 + 1) / 3, 6);
    expect(k[3]).toBeCloseTo(2 / 3, 6);
    expect(k[4]).toBeCloseTo(2 / 3, 6);
    expect(s.byKind.query.passAtK!.find((p) => p.k === 2)!.value).toBeCloseTo(5 / 12, 6);
    expect(summarize(rows.filter((r) => r.sample === 0)).overall.passAtK).toBeUndefined();
  });

  it("status breakdown, rounds, tokens and latency", () => {
    expect(s.overall.status).toEqual({ completed: 8, invalid_action: 1, limit_reached: 2, context_limit: 0, model_error: 1, error: 0 });
    expect(s.overall.meanRounds).toBeCloseTo(47 / 12, 3); // (8+8+2+1) + 4*3 + 4*4
    expect(s.usage).toEqual({ episodes: 8, prompt_tokens: 800, completion_tokens: 80, total_tokens: 880, perEpisode: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } });
    // 12 latencies sorted: 100 x4, 200 x4, 300, 400, 500, 1000. Linear interpolation at (n-1)p:
    // p50 at 5.5 -> 200; p95 at 10.45 -> 500 + 0.45 * 500 = 725.
    expect(s.latency).toEqual({ turns: 12, p50_ms: 200, p95_ms: 725 });
    expect(s.protocols).toEqual({ tools: 12 });
    expect(s.models).toEqual({ m: 12 });
    expect(s.failures.map((f) => `${f.task_id}#${f.sample ?? 0}`)).toEqual(["q1#0", "q1#1", "q1#2", "q1#3", "q2#1", "q2#3"]);
  });

  it("is JSON-plain", () => {
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });

  it("the text table shows the interval, pass@k, the status breakdown, tokens and latency", () => {
    const text = formatSummary(s);
    const table = text.split("\n\n")[0]!.split("\n");
    expect(table[0]).toMatch(/group\s+kind\s+success\s+n\s+rate\s+95% CI\s+pass@1\s+pass@2\s+pass@4$/);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
    expect(text).toMatch(/overall\s+6\s+12\s+50\.0%\s+25\.4%-74\.6%\s+50\.0%\s+61\.1%\s+66\.7%/);
    expect(text).toContain("status: completed 8, invalid action 1, round limit 2, context limit 0, model error 1, error 0");
    expect(text).toContain("3 tasks, up to 4 samples each");
    expect(text).toContain("tokens: 800 prompt + 80 completion = 880 over 8 episodes (110 per episode)");
    expect(text).toContain("latency per model call: p50 200 ms, p95 725 ms (12 calls)");
    expect(text).not.toContain("warning");
  });

  it("says so when a run mixes protocols", () => {
    const mixed = summarize([...rows, { ...rows[0]!, task_id: "x", protocol: "text" }]);
    expect(formatSummary(mixed)).toContain("warning: rows of several protocols are counted together (tools 12, text 1)");
  });
});
