import { readdirSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, EnvInputError, EpisodeStateError, MedAgentEnv } from "../../env/core/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import type { GradeInput } from "../../env/graders/index.ts";
import { POST_ACCEPTED, POST_INVALID } from "../../env/protocol/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { API_BASE, MRNS, service, sharedStore, smallStore, solGrader, task, vitalsPost } from "./fixtures.ts";

const mask = (s: string) =>
  s.replace(/("resourceType": "Bundle",\n\s*"id": ")[0-9a-f-]{36}"/, '$1<id>"').replace(/("meta": \{\n\s*"lastUpdated": ")[^"]+"/, '$1<ts>"');

describeShared("text protocol replies match the official harness byte for byte", () => {
  let store: FhirStore;
  beforeAll(async () => {
    store = await sharedStore();
  });

  const files = readdirSync(sharedFile("hapi")).filter((f) => f.endsWith(".txt"));
  it.each(files)("%s", async (file) => {
    const text = readFileSync(sharedFile(`hapi/${file}`), "utf8");
    const sep = text.indexOf("\n\n");
    const turn = text.slice(0, sep);
    const expected = text.slice(sep + 2);
    const env = new MedAgentEnv({ backend: new EmbeddedBackend(store, service(store)), grader: solGrader() });
    await env.reset({ task: task("hapi", "S6500497") });
    const step = await env.step(turn);
    expect(step.observation).toHaveLength(1);
    expect(step.observation[0]!.role).toBe("user");
    expect(mask(step.observation[0]!.content!)).toBe(mask(expected));
    const action = env.record().actions[0]!;
    expect(action).toMatchObject({ kind: "GET", raw: turn, reply: step.observation[0]!.content });
  });
});

describe("MedAgentEnv, text protocol", () => {
  const store = smallStore();
  const before = store.search("Observation", "patient=" + MRNS[0]).total;
  const seen: GradeInput[] = [];
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, service(store)), grader: solGrader(seen), tasks: [task("t-known", MRNS[0], [MRNS[0]])] });

  it("runs GET, POST (executed in the overlay), GET that sees it, FINISH graded on the base", async () => {
    const env = new MedAgentEnv(config);
    const reset = await env.reset({ taskId: "t-known" });
    expect(reset.observation).toHaveLength(1);
    expect(reset.observation[0]!.content).toContain(`Use ${API_BASE} as the api_base`);
    expect(reset.info).toEqual({ taskId: "t-known", status: "running", rounds: 0, invalidActions: 0 });

    const s1 = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}&code=K`);
    expect(s1.observation[0]!.content).toMatch(/^Here is the response from the GET request:\n\{\n  "resourceType": "Bundle"/);
    expect(s1.observation[0]!.content).toContain('"total": 3');
    expect(s1).toMatchObject({ reward: 0, terminated: false, truncated: false, info: { rounds: 1, status: "running" } });

    const s2 = await env.step("```tool_code\n" + vitalsPost(MRNS[0]!) + "\n```");
    expect(s2.observation).toEqual([{ role: "user", content: POST_ACCEPTED }]);
    const s3 = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}`);
    expect(s3.observation[0]!.content).toContain('"total": 4');

    const s4 = await env.step(`FINISH(["${MRNS[0]}"])`);
    expect(s4).toMatchObject({ observation: [], reward: 1, terminated: true, truncated: false });
    expect(s4.info).toMatchObject({ status: "completed", rounds: 4, result: `["${MRNS[0]}"]`, reward: 1, partialCredit: 1, metrics: { correct: 1 } });
    expect(seen.at(-1)!.base).toBe(store);
    expect(seen.at(-1)!.apiBase).toBe(API_BASE);

    const rec = env.record();
    expect(rec.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(rec.actions.map((a) => a.kind)).toEqual(["GET", "POST", "GET", "FINISH"]);
    expect(rec.actions[1]).toMatchObject({ accepted: true, url: `${API_BASE}Observation`, reply: POST_ACCEPTED, response: { status: 201 } });
    expect(rec.actions[1]!.raw.startsWith("```tool_code\nPOST")).toBe(true);
    expect((rec.actions[1]!.body as { valueString: string }).valueString).toBe("118/77 mmHg");
    expect(rec.actions[3]!.reply).toBeUndefined();
    // Rolled back: the base never changed and a new episode does not see the POST.
    expect(store.search("Observation", "patient=" + MRNS[0]).total).toBe(before);
    await env.reset({ taskId: "t-known" });
    const again = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}`);
    expect(again.observation[0]!.content).toContain('"total": 3');
  });

  it("hands out observations the caller may change without touching the record", async () => {
    const env = new MedAgentEnv(config);
    const first = await env.reset({ task: task("t") });
    first.observation[0]!.content = "changed";
    const step = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}`);
    const text = step.observation[0]!.content as string;
    expect(JSON.parse(JSON.stringify(step)).observation[0].content).toBe(text);
    step.observation[0]!.content = "changed too";
    const rec = env.record();
    expect(rec.messages[0]!.content).not.toBe("changed");
    expect(rec.messages[2]!.content).toBe(text);
    expect(rec.actions[0]!.reply).toBe(text);
  });

  it("answers invalid POST bodies and GET errors like the harness", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t") });
    expect((await env.step(`POST ${API_BASE}Observation\n{'a': 1}`)).observation[0]!.content).toBe(POST_INVALID);
    expect((await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}&date=notadate`)).observation[0]!.content).toBe(
      `Error in sending the GET request: 400 Client Error:  for url: ${API_BASE}Observation?patient=${MRNS[0]}&date=notadate&_format=json`,
    );
    expect((await env.step("GET http://example.org/fhir/Patient?x=1")).observation[0]!.content).toMatch(
      /^Error in sending the GET request: HTTPConnectionPool\(host='example.org', port=80\): Max retries exceeded with url: \/fhir\/Patient\?x=1&_format=json /,
    );
    expect((await env.step("GET")).observation[0]!.content).toBe(
      "Error in sending the GET request: Invalid URL '&_format=json': No scheme supplied. Perhaps you meant https://&_format=json?",
    );
    const rec = env.record();
    expect(rec.actions[0]).toMatchObject({ kind: "POST", accepted: false });
    expect(rec.actions[0]!.response).toBeUndefined();
    expect(rec.actions[1]!.response!.status).toBe(400);
  });

  it("ends with invalid_action (reward 0, not graded) on anything else", async () => {
    const env = new MedAgentEnv(config);
    const graded = seen.length;
    await env.reset({ task: task("t", MRNS[0], [MRNS[0]]) });
    await env.step(vitalsPost(MRNS[0]!));
    const s = await env.step("I think the answer is 42");
    expect(s).toMatchObject({ observation: [], reward: 0, terminated: true, truncated: false });
    expect(s.info).toMatchObject({ status: "invalid_action", invalidActions: 1, reward: 0, partialCredit: 0 });
    expect(s.info.checks![0]).toMatchObject({ name: "status", ok: false });
    expect(seen.length).toBe(graded);
    expect(store.search("Observation", "patient=" + MRNS[0]).total).toBe(before);
    await expect(env.step("FINISH([])")).rejects.toThrow(EpisodeStateError);
  });

  it("ends with limit_reached after maxRounds turns, keeping the last reply", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), maxRounds: 2 });
    expect((await env.step(vitalsPost(MRNS[1]!))).truncated).toBe(false);
    const s = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[1]}`);
    expect(s).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { status: "limit_reached", rounds: 2 } });
    expect(s.observation[0]!.content).toContain('"total": 4');
    expect(env.record().actions[1]!.reply).toBe(s.observation[0]!.content);
    expect(store.search("Observation", "patient=" + MRNS[1]).total).toBe(3);
  });

  it("ends with context_limit or error when aborted, and rolls back", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t") });
    await env.step(vitalsPost(MRNS[2]!));
    const info = await env.abort("context_limit", "prompt too long");
    expect(info).toMatchObject({ status: "context_limit", reward: 0, error: "prompt too long" });
    await env.reset({ task: task("t") });
    const s = await env.step(`GET ${API_BASE}Observation?patient=${MRNS[2]}`);
    expect(s.observation[0]!.content).toContain('"total": 3');
    expect((await env.abort("error")).status).toBe("error");
  });

  it("records writes without executing them with writes=record (same reply text)", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), writes: "record" });
    expect((await env.step(vitalsPost(MRNS[0]!))).observation[0]!.content).toBe(POST_ACCEPTED);
    expect((await env.step(`GET ${API_BASE}Observation?patient=${MRNS[0]}`)).observation[0]!.content).toContain('"total": 3');
    expect(env.record().actions[0]).toMatchObject({ kind: "POST", accepted: true });
    expect(env.record().actions[0]!.response).toBeUndefined();
  });

  it("handles agent garbage exactly as the harness does", async () => {
    const env = new MedAgentEnv(config);
    const cases: [string, string][] = [
      ["", "invalid_action"],
      ["\u0000\u0001\u0002binary", "invalid_action"],
      ["```\n```", "invalid_action"],
      ["GET x\nFINISH([1])", "running"],
      ["POST x\n" + JSON.stringify({ big: "x".repeat(200_000), list: Array.from({ length: 10_000 }, (_, i) => i) }), "running"],
      ["POST x\n" + "[".repeat(5000), "running"],
      ["```FINISH([1])", "completed"],
    ];
    for (const [turn, status] of cases) {
      await env.reset({ task: task("t") });
      const s = await env.step(turn);
      expect([JSON.stringify(turn).slice(0, 40), s.info.status]).toEqual([JSON.stringify(turn).slice(0, 40), status]);
    }
  });

  it("rejects bad reset options and unknown tasks", async () => {
    const env = new MedAgentEnv(config);
    await expect(env.step("GET x")).rejects.toThrow(EpisodeStateError);
    await expect(env.reset({ taskId: "nope" })).rejects.toThrow(/unknown task id "nope"/);
    await expect(env.reset({})).rejects.toThrow(EnvInputError);
    await expect(env.reset({ task: task("t"), maxRounds: 0 })).rejects.toThrow(/maxRounds/);
    await expect(env.reset({ task: task("t"), protocol: "xml" as never })).rejects.toThrow(/protocol/);
  });
});

describeShared("official tasks with the default grader", () => {
  it("grades task1 of test_data_v2 with env/graders (pass and fail) on the base store", async () => {
    const { loadTaskFile } = await import("../../env/tasks/index.ts");
    const store = await sharedStore();
    const tasks = loadTaskFile(sharedFile("test_data_v2.json"));
    const env = new MedAgentEnv({ store, tasks });
    const t = tasks.find((x) => x.id === "task1_1")!;
    await env.reset({ taskId: t.id });
    const s1 = await env.step(`GET ${API_BASE}Patient?family=Stafford&given=Peter&birthdate=1932-12-29`);
    expect(s1.observation[0]!.content).toContain(`"id": "${t.eval_MRN}"`);
    const ok = await env.step(`FINISH(${JSON.stringify(t.sol)})`);
    expect(ok).toMatchObject({ reward: 1, info: { status: "completed", reward: 1, partialCredit: 1 } });
    await env.reset({ taskId: t.id });
    const bad = await env.step(`FINISH(["S0000000"])`);
    expect(bad).toMatchObject({ reward: 0, info: { status: "completed", reward: 0 } });
    expect(bad.info.checks!.some((c) => !c.ok)).toBe(true);
  });
});
