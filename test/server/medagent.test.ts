// The reward server over the real MedAgentEnv: episodes, rewards, score replay, isolation between
// concurrent episodes (the Python client's tests: scripts/python/tests/).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { API_BASE, medAgentTestBackend, type LookupCase } from "./medagent-backend.ts";

let server: RewardServer;
let url: string;
let cases: LookupCase[];

beforeAll(async () => {
  const built = medAgentTestBackend(3);
  cases = built.cases;
  server = createRewardServer({ backend: built.backend });
  url = await server.listen(0);
});
afterAll(async () => {
  await server?.close();
});

async function post(path: string, body: unknown) {
  const res = await fetch(url + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

describe("reward server over MedAgentEnv", () => {
  it("plays a text-protocol episode: prompt, HAPI-style GET reply, FINISH graded 1", async () => {
    const c = cases[0]!;
    const created = await post("/v1/episodes", { task_id: c.task.id, protocol: "text" });
    expect(created.status).toBe(201);
    expect(created.json.observation).toHaveLength(1);
    expect(created.json.observation[0].role).toBe("user");
    expect(created.json.observation[0].content).toContain(c.task.instruction);
    expect(created.json.observation[0].content).toContain(API_BASE);
    const id = created.json.episode_id;
    const get = await post(`/v1/episodes/${id}/step`, { action: c.turns[0] });
    expect(get.status).toBe(200);
    expect(get.json.observation).toHaveLength(1);
    expect(get.json.observation[0].content).toMatch(/^Here is the response from the GET request:\n\{/);
    expect(get.json.observation[0].content).toContain(c.task.sol![0] as string);
    const fin = await post(`/v1/episodes/${id}/step`, { action: c.turns[1] });
    expect(fin.json).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { status: "completed", rounds: 2 } });
    expect((await post(`/v1/episodes/${id}/step`, { action: c.turns[1] })).status).toBe(409);
  });

  it("plays a tool-protocol episode with OpenAI tool calls", async () => {
    const c = cases[1]!;
    const created = await post("/v1/episodes", { task_id: c.task.id, protocol: "tools" });
    expect(created.json.tools.map((t: any) => t.function.name)).toContain("patient_search");
    const id = created.json.episode_id;
    const search = await post(`/v1/episodes/${id}/step`, { message: c.toolTurns[0] });
    expect(search.json.observation).toEqual([expect.objectContaining({ role: "tool", tool_call_id: "call_1" })]);
    expect(search.json.observation[0].content).toContain(c.task.sol![0] as string);
    const fin = await post(`/v1/episodes/${id}/step`, { message: c.toolTurns[1] });
    expect(fin.json).toMatchObject({ reward: 1, terminated: true });
  });

  it("scores a transcript by replay, and a wrong answer gets 0", async () => {
    const c = cases[2]!;
    const messages = [{ role: "user", content: "prompt" }, ...c.turns.map((t) => ({ role: "assistant", content: t }))];
    const right = await post("/v1/score", { task_id: c.task.id, messages, return_messages: true });
    expect(right.json).toMatchObject({ reward: 1, replayed_turns: 2, ignored_turns: 0, info: { status: "completed" } });
    expect(right.json.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const wrong = await post("/v1/score", { task_id: c.task.id, messages: [{ role: "assistant", content: 'FINISH(["S0000000"])' }] });
    expect(wrong.json).toMatchObject({ reward: 0, info: { status: "completed" } });
    const invalid = await post("/v1/score", { task_id: c.task.id, messages: [{ role: "assistant", content: "I think the answer is S1" }] });
    expect(invalid.json).toMatchObject({ reward: 0, terminated: true, info: { status: "invalid_action" } });
  });

  it("keeps concurrent episodes isolated: one episode's POST is invisible to another", async () => {
    const c = cases[0]!;
    const a = (await post("/v1/episodes", { task_id: c.task.id })).json.episode_id;
    const b = (await post("/v1/episodes", { task_id: c.task.id })).json.episode_id;
    const created = await post(`/v1/episodes/${a}/step`, {
      action: `POST ${API_BASE}Patient\n${JSON.stringify({ resourceType: "Patient", name: [{ family: "Zzyzxtestfamily", given: ["Ann"] }], birthDate: "1990-01-01" })}`,
    });
    expect(created.json.observation[0].content).toContain("POST request accepted");
    const seenByA = await post(`/v1/episodes/${a}/step`, { action: `GET ${API_BASE}Patient?family=Zzyzxtestfamily` });
    const seenByB = await post(`/v1/episodes/${b}/step`, { action: `GET ${API_BASE}Patient?family=Zzyzxtestfamily` });
    expect(seenByA.json.observation[0].content).toContain('"total": 1');
    expect(seenByB.json.observation[0].content).toContain('"total": 0');
  });
});

describe("reward server over MedAgentEnv: fuzzed turns", () => {
  it("answers random text and tool turns with 200 until the episode ends, then 409", async () => {
    const c = cases[0]!;
    const mrn = c.task.sol![0] as string;
    const resource = fc.constantFrom("Patient", "Observation", "Condition", "MedicationRequest", "Procedure", "Nope", "");
    const query = fc.array(fc.tuple(fc.constantFrom("patient", "code", "date", "_count", "_sort", "name", "birthdate", "identifier", "category", "we ird&key"), fc.oneof(fc.constant(mrn), fc.string(), fc.constantFrom("ge2023-01-01", "-date", "5000", "GLU", "le", "2023-13-45"))), { maxLength: 4 });
    const getTurn = fc.tuple(resource, query, fc.boolean()).map(([r, q, base]) => `GET ${base ? API_BASE : "http://elsewhere/"}${r}?${q.map(([k, v]) => `${k}=${v}`).join("&")}`);
    const postTurn = fc.tuple(resource, fc.oneof(fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), fc.string())).map(([r, body]) => `POST ${API_BASE}${r}\n${body}`);
    const textTurn = fc.oneof(getTurn, postTurn, fc.string(), fc.string().map((s) => `FINISH(${s})`));
    const toolCall = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8 }),
      type: fc.constant("function"),
      function: fc.record({
        name: fc.constantFrom("fhir_patient_search", "fhir_observation_search", "fhir_vitals_create", "finish", "no_such_tool"),
        arguments: fc.oneof(fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), fc.string(), fc.constant(JSON.stringify({ patient: mrn, code: "GLU" }))),
      }),
    });
    const toolTurn = fc.record({ role: fc.constant("assistant"), content: fc.oneof(fc.constant(null), fc.string()), tool_calls: fc.array(toolCall, { maxLength: 3 }) });
    const episode = fc.oneof(
      fc.record({ protocol: fc.constant("text" as const), turns: fc.array(textTurn, { minLength: 1, maxLength: 9 }) }),
      fc.record({ protocol: fc.constant("tools" as const), turns: fc.array(toolTurn, { minLength: 1, maxLength: 9 }) }),
    );
    await fc.assert(
      fc.asyncProperty(episode, async ({ protocol, turns }) => {
        const id = (await post("/v1/episodes", { task_id: c.task.id, protocol })).json.episode_id as string;
        let done = false;
        for (const turn of turns) {
          const r = await post(`/v1/episodes/${id}/step`, protocol === "text" ? { action: turn } : { message: turn });
          if (done) {
            expect(r.status).toBe(409);
            continue;
          }
          expect([200, 400], JSON.stringify(r.json)).toContain(r.status);
          if (r.status === 400) {
            expect(typeof r.json.error).toBe("string");
            continue;
          }
          expect(Array.isArray(r.json.observation)).toBe(true);
          expect(r.json.info.status).not.toBe("error");
          done = r.json.terminated || r.json.truncated;
        }
        await fetch(`${url}/v1/episodes/${id}`, { method: "DELETE" });
      }),
      { numRuns: 80, seed: 424242 },
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
