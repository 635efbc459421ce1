// The original validates each tool call with `Model.model_validate(json.loads(arguments))`: pydantic v2 in
// lax mode. Each case below carries the original's verdict (checked against pydantic 2.11+ on the
// original's models): accepted or not, and what its create then POSTs (`model_dump(exclude_none=True)`)
// or what finish answers. The graders keep reading the arguments as the model sent them.
import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv, type Message } from "../../env/core/index.ts";
import { planToolCall, type ToolCallPlan } from "../../env/protocol/index.ts";
import { laxFloat, pyStr } from "../../env/python/index.ts";
import { MRNS, service, smallStore } from "../core/fixtures.ts";

const MRN = MRNS[0]!;
const dose = (value: unknown) => ({
  resourceType: "MedicationRequest",
  medicationCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "0338-1715-40", display: "Magnesium sulfate" }], text: "Magnesium sulfate 2 g IV" },
  authoredOn: "2023-11-13T10:15:00+00:00",
  dosageInstruction: [{ route: "IV", doseAndRate: [{ doseQuantity: { value, unit: "g" }, rateQuantity: { value: 2, unit: "h" } }] }],
  status: "active",
  intent: "order",
  subject: { reference: `Patient/${MRN}` },
});
const plan = (name: string, args: unknown): ToolCallPlan => planToolCall(name, typeof args === "string" ? args : JSON.stringify(args));
const posted = (args: unknown) => {
  const p = plan("fhir_medication_request_create", args);
  if (p.kind !== "POST") throw new Error(p.kind === "FAIL" ? p.error : p.kind);
  return p.body as ReturnType<typeof dose>;
};
const sentDose = (value: unknown) => posted(dose(value)).dosageInstruction[0]!.doseAndRate[0]!.doseQuantity.value;

describe("float fields take what pydantic's lax float takes", () => {
  // [input, the float the original's DoseQuantity.value holds; undefined: ValidationError]
  const CASES: [unknown, number | undefined][] = [
    [2, 2],
    [1.5, 1.5],
    [true, 1],
    [false, 0],
    ["2", 2],
    [" 12 ", 12],
    ["1_0", 10],
    ["1_0.5_0", 10.5],
    ["+1.5", 1.5],
    ["1.", 1],
    [".5", 0.5],
    ["1E+3", 1000],
    ["nan", NaN],
    ["-Infinity", -Infinity],
    ["1__0", undefined],
    ["_1", undefined],
    ["1_", undefined],
    [" 1_0 ", undefined],
    ["0x10", undefined],
    ["", undefined],
    ["1 0", undefined],
    ["two", undefined],
    [null, undefined],
    [[1], undefined],
    [{ value: 1 }, undefined],
  ];
  it.each(CASES)("%j -> %s", (input, expected) => {
    expect(laxFloat(input)).toBe(expected);
    if (expected === undefined) expect(plan("fhir_medication_request_create", dose(input))).toMatchObject({ kind: "FAIL", error: expect.stringMatching(/doseQuantity\.value.*valid number/) });
    else if (!Number.isNaN(expected)) expect(sentDose(input)).toBe(expected);
  });
});

describe("the other field types", () => {
  it("str takes only strings: a number, a bool or null for a unit fails", () => {
    for (const unit of [5, true, null]) {
      const args = dose(1);
      args.dosageInstruction[0]!.doseAndRate[0]!.doseQuantity.unit = unit as never;
      expect(plan("fhir_medication_request_create", args)).toMatchObject({ kind: "FAIL", error: expect.stringContaining("valid string") });
    }
    expect(plan("patient_search", { birthdate: null, family: 7, given: null, identifier: null })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("family") });
  });

  it("Optional[str] without a default must be given (null is fine); with a default it may be left out", () => {
    expect(plan("patient_search", { family: null, given: null, identifier: MRN })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("birthdate") });
    expect(plan("patient_search", { birthdate: null, family: null, given: null, identifier: MRN })).toMatchObject({ kind: "GET", path: `Patient?identifier=${MRN}` });
    expect(plan("fhir_procedure_search", { search_params: { date: "ge2023-01-01", patient: MRN }, explanation: "x" })).toMatchObject({ kind: "GET" });
    expect(plan("fhir_condition_search", { search_params: { patient: MRN }, explanation: "x" })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("code") });
  });

  it("a list field refuses an object, a nested model refuses a string or a list", () => {
    expect(plan("fhir_medication_request_create", { ...dose(1), dosageInstruction: { route: "IV" } })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("valid list") });
    expect(plan("fhir_medication_request_create", { ...dose(1), subject: `Patient/${MRN}` })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("subject") });
    expect(plan("fhir_medication_request_create", { ...dose(1), subject: [{ reference: `Patient/${MRN}` }] })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("subject") });
  });

  it("the *Args wrappers forbid unknown keys; every other model ignores them", () => {
    expect(plan("fhir_observation_search", { search_params: { code: "K", patient: MRN }, explanation: "x", note: 1 })).toMatchObject({ kind: "FAIL", error: expect.stringContaining("Extra inputs") });
    expect(plan("fhir_observation_search", { search_params: { code: "K", patient: MRN, date: "ge2023" }, explanation: "x" })).toMatchObject({ kind: "GET", path: `Observation?code=K&patient=${MRN}&_sort=-date&_count=200` });
    expect(plan("patient_search", { birthdate: null, family: null, given: null, identifier: MRN, name: "x" })).toMatchObject({ kind: "GET" });
  });
});

describe("creates POST the model's dump: declared fields only, coerced, no nulls", () => {
  it("undeclared keys at any depth never reach the server; the graders see them", () => {
    const args = { ...dose("2"), meta: "x", id: "bad id!", note: [{ text: "n" }], subject: { reference: `Patient/${MRN}`, display: 5 } };
    args.dosageInstruction = [{ ...args.dosageInstruction[0]!, text: "2 g IV over 1 h", timing: { repeat: { frequency: 1 } } } as never];
    const p = plan("fhir_medication_request_create", args);
    expect(p).toMatchObject({ kind: "POST", args });
    const body = (p as Extract<ToolCallPlan, { kind: "POST" }>).body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["resourceType", "medicationCodeableConcept", "authoredOn", "dosageInstruction", "status", "intent", "subject"]);
    expect(body.subject).toEqual({ reference: `Patient/${MRN}` });
    expect(body.dosageInstruction).toEqual([{ route: "IV", doseAndRate: [{ doseQuantity: { value: 2, unit: "g" }, rateQuantity: { value: 2, unit: "h" } }] }]);
  });

  it("in an episode, such a create is accepted (the server never sees `id: \"bad id!\"`) and the POST is graded as sent", async () => {
    const store = smallStore();
    const env = new MedAgentEnv(new EnvConfig({ backend: new EmbeddedBackend(store, service(store)) }));
    await env.reset({ task: { id: "task5_1", suite: "mab-v1", type: "task5", instruction: "Order magnesium.", context: "It's 2023-11-13T10:15:00+00:00 now", eval_MRN: MRN }, protocol: "tools" });
    const args = { ...dose(true), id: "bad id!", meta: "x" };
    const call = (id: string, name: string, a: unknown) => ({ id, type: "function" as const, function: { name, arguments: JSON.stringify(a) } });
    const step = await env.step({ role: "assistant", content: null, tool_calls: [call("c1", "fhir_medication_request_create", args)] } as Message);
    expect(step.terminated).toBe(false);
    const reply = env.record().messages.at(-1)!.content as string;
    expect(reply).toContain("'resourceType': 'MedicationRequest'");
    expect(reply).not.toContain("bad id!");
    expect(reply).toContain("'value': 1");
    const post = env.record().actions.find((a) => a.kind === "POST")!;
    expect(post).toMatchObject({ accepted: true, body: args });
    await env.step({ role: "assistant", content: null, tool_calls: [call("c2", "finish", { value: [] })] } as Message);
  });
});

describe("finish: list[str | int | float | None] as pydantic's smart union reads it", () => {
  const finish = async (value: unknown) => {
    const store = smallStore();
    const env = new MedAgentEnv(new EnvConfig({ backend: new EmbeddedBackend(store, service(store)) }));
    await env.reset({ task: { id: "task2_1", suite: "mab-v1", type: "task2", instruction: "Age?", context: "now", eval_MRN: MRN }, protocol: "tools" });
    await env.step({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "finish", arguments: typeof value === "string" ? value : JSON.stringify({ value }) } }] });
    const { info, messages } = env.record();
    return { status: info.status, result: info.result, reply: messages.at(-1)!.content };
  };

  it("true becomes 1, false 0; strings, ints, floats and None stay as they are", async () => {
    expect(await finish([true, false, "5", 70, null])).toMatchObject({ status: "completed", result: '[1, 0, "5", 70, null]', reply: "[1, 0, '5', 70, None]" });
    expect(await finish('{"value": [70.0, 1e400, 12345678901234567890]}')).toMatchObject({ result: "[70.0, Infinity, 12345678901234567890]", reply: "[70.0, inf, 12345678901234567890]" });
  });

  it("a dict, a nested list or a bare value is a validation error: the run ends with []", async () => {
    for (const bad of [[{ a: 1 }], [[1]], 70, "S1"]) expect(await finish(bad)).toMatchObject({ status: "invalid_action", result: undefined });
  });

  it("the Python text of the coerced value is what the original's str() gives", () => {
    expect(pyStr([1n, 0n, "5", 70.5, null])).toBe("[1, 0, '5', 70.5, None]");
  });
});
