// The tool protocol is MedAgentBench V2's (PROTOCOL.md section 2): its tools, first message and reply
// format. The verdict transcripts (one table for every surface) are test/protocol/verdict-cases.ts.
import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv, type Message } from "../../env/core/index.ts";
import { calculate, DEFAULT_TOOL_NAMES, MEDARC_TOOL_NAMES, openAITools, planToolCall } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { MRNS, service, smallStore } from "./fixtures.ts";

const store = smallStore();
const backend = new EmbeddedBackend(store, service(store));
const original = new EnvConfig({ backend });
const medarc = new EnvConfig({ backend, v2Semantics: "medarc" });
const MRN = MRNS[0]!; // born 1953-11-13: 70 on 2023-11-13
const ctx = "It's 2023-11-13T10:15:00+00:00 now";
// mab-v1 task2 (age): no POST at all, answer == [70].
const age: Task = { id: "task2_1", suite: "mab-v1", type: "task2", instruction: `What's the age of the patient with MRN of ${MRN}?`, context: ctx, eval_MRN: MRN };

let n = 0;
const call = (name: string, args: unknown) => ({ id: `call_${n++}`, type: "function" as const, function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });
const turn = (...calls: ReturnType<typeof call>[]): Message => ({ role: "assistant", content: null, tool_calls: calls });
const finish = (value: unknown[]) => call("finish", { value });

async function run(config: EnvConfig, task: Task, turns: Message[], maxRounds = 8) {
  const env = new MedAgentEnv(config);
  const reset = await env.reset({ task, protocol: "tools", maxRounds });
  let last;
  for (const t of turns) {
    last = await env.step(t);
    if (last.terminated || last.truncated) break;
  }
  return { reset, info: env.record().info, messages: env.record().messages, last };
}

describe("the original's tools", () => {
  it("are the original's eleven, with its nesting and required fields, as OpenAI tools JSON", () => {
    const tools = openAITools();
    expect(tools.map((t) => t.function.name)).toEqual([
      "patient_search",
      "fhir_vitals_search",
      "fhir_observation_search",
      "fhir_medication_request_search",
      "fhir_medication_request_create",
      "fhir_service_request_create",
      "fhir_vitals_create",
      "fhir_procedure_search",
      "fhir_condition_search",
      "calculator",
      "finish",
    ]);
    const params = (name: string) => tools.find((t) => t.function.name === name)!.function.parameters as { required?: string[]; properties: Record<string, { required?: string[]; anyOf?: unknown[]; additionalProperties?: unknown }>; additionalProperties?: unknown };
    // ObservationSearchArgs: search_params + explanation, extra keys forbidden; the params need code and patient.
    expect(params("fhir_observation_search").required).toEqual(["search_params", "explanation"]);
    expect(params("fhir_observation_search").additionalProperties).toBe(false);
    expect(params("fhir_observation_search").properties.search_params!.required).toEqual(["code", "patient"]);
    // ProcedureSearchParams.code is Optional with a default, yet strict tool schemas list every property
    // as required (the model sends null); validation still lets it be left out.
    expect(params("fhir_procedure_search").properties.search_params!.required).toEqual(["code", "date", "patient"]);
    expect(planToolCall("fhir_procedure_search", JSON.stringify({ search_params: { date: "ge2023", patient: MRN }, explanation: "x" })).kind).toBe("GET");
    // Optional[str] without a default is required but nullable (pydantic v2).
    expect(params("patient_search").required).toEqual(["birthdate", "family", "given", "identifier"]);
    expect((params("patient_search").properties.identifier as { type?: string[] }).type).toEqual(["string", "null"]);
    expect(params("fhir_service_request_create").required).toEqual(["resourceType", "code", "authoredOn", "status", "intent", "priority", "subject", "note", "occurrenceDateTime"]);
    expect(params("calculator").required).toEqual(["expression"]);
    expect(params("finish").required).toEqual(["value"]);
    for (const t of tools) expect(t.function.description).toBeTruthy();
    expect(MEDARC_TOOL_NAMES).toContain("fhir_patient_search");
    expect(DEFAULT_TOOL_NAMES).not.toContain("fhir_patient_search");
  });

  it("map searches to the original's requests (its _sort and _count, None dropped)", () => {
    expect(planToolCall("fhir_observation_search", JSON.stringify({ search_params: { code: "K", patient: MRN }, explanation: "x" }))).toMatchObject({
      kind: "GET",
      path: `Observation?code=K&patient=${MRN}&_sort=-date&_count=200`,
    });
    expect(planToolCall("patient_search", JSON.stringify({ birthdate: "1953-11-13", family: "O'Neil Smith", given: null, identifier: null }))).toMatchObject({
      path: "Patient?birthdate=1953-11-13&family=O'Neil%20Smith",
    });
    expect(planToolCall("fhir_vitals_search", JSON.stringify({ category: "vital-signs", date: null, patient: MRN }))).toMatchObject({ path: `Observation?category=vital-signs&patient=${MRN}` });
    // Flat argument shapes where the original nests them fail validation (the run would end).
    expect(planToolCall("fhir_observation_search", JSON.stringify({ code: "K", patient: MRN }))).toMatchObject({ kind: "FAIL" });
    expect(planToolCall("patient_search", JSON.stringify({ identifier: MRN }))).toMatchObject({ kind: "FAIL", error: expect.stringContaining("birthdate") });
    expect(planToolCall("fhir_observation_search", "{not json")).toMatchObject({ kind: "FAIL", badJson: true });
  });

  it("calculator answers Python's str() of the arithmetic", () => {
    expect(calculate("1 + 2")).toBe("3");
    expect(calculate("7 / 2")).toBe("3.5");
    expect(calculate("(3.5 - 3.1) / 0.1 * 10")).toBe("39.99999999999999");
    expect(calculate("2 ** 10 // 3")).toBe("341");
    expect(() => calculate("__import__('os')")).toThrow();
  });
});

describe("the original's episode rules", () => {
  it("the first message is the original's <instruction>/<context> text; tools are the original's", async () => {
    const { reset } = await run(original, age, []);
    expect(reset.observation.at(-1)!.content).toBe(`<instruction>\n${age.instruction}\n</instruction>\n<context>\n${ctx}\n</context>\n`);
    expect((reset.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([...DEFAULT_TOOL_NAMES]);
  });

  it("a search then finish([70]) passes; the tool reply is Python's str() of the JSON", async () => {
    const { info, messages } = await run(original, age, [turn(call("patient_search", { birthdate: null, family: null, given: null, identifier: MRN })), turn(finish([70]))]);
    expect(info).toMatchObject({ status: "completed", result: "[70]", reward: 1 });
    expect(messages.find((m) => m.role === "tool")!.content).toMatch(/^\{'resourceType': 'Bundle', 'id': '[^']+', 'meta': \{'lastUpdated': '/);
  });

  it("the finish value is json.dumps'd as Python does (floats, separators)", async () => {
    const { info } = await run(original, age, [turn(finish([70.0, "x", null]))]);
    expect(info.result).toBe('[70, "x", null]');
  });
});

describe("--v2-semantics medarc (the verifiers port)", () => {
  it("offers fhir_patient_search and adds the port's line to the user message", async () => {
    const { reset } = await run(medarc, age, []);
    expect((reset.tools as { function: { name: string } }[])[0]!.function.name).toBe("fhir_patient_search");
    expect(reset.observation.at(-1)!.content).toMatch(/use the finish tool when you have the final answer\.\n$/);
  });

  it("a failing call answers an error and the run goes on; an unknown name is rewritten to calculator", async () => {
    const { info, messages } = await run(medarc, age, [turn(call("no_such_tool", {}), call("fhir_vitals_create", { resourceType: "Observation" })), turn(finish([70]))]);
    expect(messages.filter((m) => m.role === "tool").map((m) => m.content!.slice(0, 40))).toEqual(["Error: Invalid tool formatting for 'no_s", expect.stringMatching(/^Error: /), "[70]"]);
    expect(messages.find((m) => m.role === "assistant")!.tool_calls![0]!.function).toEqual({ name: "calculator", arguments: "{}" });
    // The failed create was still logged as "POST url..." followed by "POST request accepted": has POST -> 0.
    expect(info).toMatchObject({ status: "completed", reward: 0 });
  });
});

