// The verdict transcripts (./verdict-cases.ts) through the environment, /v1/score and a reward-server
// episode (a real server on loopback), in both --v2-semantics modes and, for the text cases with
// reasoning, under --think-blocks official: every surface reaches the same verdict.
// `ehrgym eval` and `ehrgym rollout`: ./verdicts-cli.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv, type Message } from "../../env/core/index.ts";
import type { V2Semantics } from "../../env/protocol/index.ts";
import { createRewardServer, medAgentBackend, type RewardServer } from "../../env/server/index.ts";
import { service } from "../core/fixtures.ts";
import { VERDICT_CASES, verdictOf, verdictStore, type VerdictCase } from "./verdict-cases.ts";

const store = verdictStore();
const backend = new EmbeddedBackend(store, service(store));
type Mode = V2Semantics | "official";
const configs: Record<Mode, EnvConfig> = {
  original: new EnvConfig({ backend }),
  medarc: new EnvConfig({ backend, v2Semantics: "medarc" }),
  official: new EnvConfig({ backend, thinkBlocks: "official" }),
};
const servers: Partial<Record<Mode, { server: RewardServer; url: string }>> = {};

beforeAll(async () => {
  for (const mode of ["original", "medarc", "official"] as const) {
    const server = createRewardServer({ backend: medAgentBackend(configs[mode], VERDICT_CASES.map((c) => c.task)) });
    servers[mode] = { server, url: await server.listen(0) };
  }
});
afterAll(async () => {
  for (const s of Object.values(servers)) await s?.server.close();
});

async function post(mode: Mode, path: string, body: unknown): Promise<any> {
  const res = await fetch(servers[mode]!.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

/** Plays the case in a MedAgentEnv until the run ends. */
async function viaEnv(mode: Mode, c: VerdictCase) {
  const env = new MedAgentEnv(configs[mode]);
  await env.reset({ task: c.task, protocol: c.protocol ?? "tools" });
  for (const t of c.turns) {
    const r = await env.step(t);
    if (r.terminated || r.truncated) break;
  }
  const { info, messages } = env.record();
  return { status: info.status, reward: info.reward ?? 0, result: info.result, messages };
}

async function viaScore(mode: Mode, c: VerdictCase) {
  const r = await post(mode, "/v1/score", { task: c.task, protocol: c.protocol ?? "tools", messages: c.turns, return_messages: true });
  return { status: r.info.status, reward: r.reward, result: r.info.result, messages: r.messages as Message[] };
}

async function viaEpisode(mode: Mode, c: VerdictCase) {
  const opened = await post(mode, "/v1/episodes", { task: c.task, protocol: c.protocol ?? "tools" });
  const messages: Message[] = [...opened.observation];
  let last: any;
  for (const t of c.turns) {
    last = await post(mode, `/v1/episodes/${opened.episode_id}/step`, { message: t });
    messages.push(t, ...last.observation);
    if (last.terminated || last.truncated) break;
  }
  expect(last.terminated || last.truncated).toBe(true);
  return { status: last.info.status, reward: last.reward, result: last.info.result, messages };
}

const SURFACES = { environment: viaEnv, "/v1/score": viaScore, "reward-server episode": viaEpisode } as const;

describe.each(["original", "medarc"] as const)("--v2-semantics %s", (mode) => {
  describe.each(Object.keys(SURFACES) as (keyof typeof SURFACES)[])("through %s", (surface) => {
    it.each(VERDICT_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
      const expected = c[mode];
      const run = await SURFACES[surface](mode, c);
      expect(verdictOf(run, expected, c.protocol), c.why).toEqual(expected);
    });
  });
});

describe("--think-blocks official", () => {
  const official = VERDICT_CASES.filter((c) => c.official);
  describe.each(Object.keys(SURFACES) as (keyof typeof SURFACES)[])("through %s", (surface) => {
    it.each(official.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
      const run = await SURFACES[surface]("official", c);
      expect(verdictOf(run, c.official!, c.protocol), c.why).toEqual(c.official);
    });
  });
});

describe("the transcript keeps each turn's reasoning apart from its action text", () => {
  // (A reward-server episode's client holds its own copy of what it sent.)
  it.each(["environment", "/v1/score"] as const)("through %s", async (surface) => {
    const c = VERDICT_CASES.find((x) => x.name === "think-then-get")!;
    const run = await SURFACES[surface]("original", c);
    const turns = run.messages.filter((m) => m.role === "assistant");
    expect(turns[0]).toEqual({ role: "assistant", content: "GET http://localhost:8080/fhir/Patient?identifier=S1000001", reasoning_content: "Look the patient up first." });
    expect(turns[1]).toEqual({ role: "assistant", content: "FINISH([70])" });
  });
});
