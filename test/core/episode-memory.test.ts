// What an open episode keeps of the FHIR replies it was sent. The reward server encodes each step's
// observation (JSON.stringify), and V8 flattens every string it encodes in place: had the observation
// shared its text with the episode's history, every open episode would keep a flat copy of each reply
// (the history's text is otherwise a rope of the store's cached entries). Under load those copies
// outlive the young generation and fill the old one: the step p99 at 3,000 steps/s was 40-120 ms.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeAll, describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { FhirService, type FhirStore } from "../../env/fhir/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { API_BASE } from "./fixtures.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe("an open episode's memory", () => {
  let store: FhirStore;
  let config: EnvConfig;
  const tasks: { task: Task; turns: string[] }[] = [];

  beforeAll(() => {
    store = generateStore({ patients: 20, seed: 5 }).store;
    config = new EnvConfig({ backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: API_BASE }), API_BASE) });
    for (const p of store.search("Patient", "_count=100").resources) {
      const mrn = p.id!;
      const task: Task = { id: `mem_${mrn}`, suite: "mab-v1", type: "task1", instruction: "q", context: "", sol: [mrn] };
      tasks.push({ task, turns: ["Condition", "Observation?code=K", "Observation?code=GLU", "MedicationRequest", "Procedure"].map((q) => `GET ${API_BASE}${q}${q.includes("?") ? "&" : "?"}patient=${mrn}`) });
    }
  });

  it("holds far less than a copy of each reply once the replies were encoded", async () => {
    const open: MedAgentEnv[] = [];
    const envs = Array.from({ length: 200 }, () => new MedAgentEnv(config));
    for (const [i, env] of envs.entries()) await env.reset({ task: tasks[i % tasks.length]!.task, protocol: "text" });
    // Each entry's text is rendered once and cached by the store: render them all before measuring.
    for (const { task, turns } of tasks) {
      const env = new MedAgentEnv(config);
      await env.reset({ task, protocol: "text" });
      for (const turn of turns) JSON.stringify(await env.step(turn));
      await env.close();
    }
    const before = heap();
    let replyChars = 0;
    let steps = 0;
    for (const [i, env] of envs.entries()) {
      for (const turn of tasks[i % tasks.length]!.turns) {
        const result = await env.step(turn);
        const encoded = JSON.stringify(result); // as the server answers a step
        expect(result.observation).toHaveLength(1);
        replyChars += result.observation[0]!.content!.length;
        steps++;
        expect(encoded.length).toBeGreaterThan(result.observation[0]!.content!.length);
      }
      open.push(env);
    }
    const kept = heap() - before;
    const perStep = kept / steps;
    const replyPerStep = replyChars / steps;
    expect(replyPerStep).toBeGreaterThan(2_000); // replies worth measuring
    expect(perStep, `kept ${perStep.toFixed(0)} bytes a step for replies of ${replyPerStep.toFixed(0)} characters`).toBeLessThan(replyPerStep / 3);
    // The history still says what the observation said.
    const record = open[0]!.record();
    expect(record.messages.filter((m) => m.role === "user").slice(1).every((m) => m.content!.startsWith("Here is the response from the GET request:\n{"))).toBe(true);
    expect(open).toHaveLength(envs.length);
  });
});
