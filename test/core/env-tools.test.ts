import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, EnvInputError, MedAgentEnv, RECORDED_REPLY, type Message } from "../../env/core/index.ts";
import { DEFAULT_TOOL_NAMES, EXTRA_TOOL_NAMES, openAITools, planToolCall } from "../../env/protocol/index.ts";
import { API_BASE, MRNS, service, smallStore, solGrader, task } from "./fixtures.ts";

const store = smallStore();
const config = new EnvConfig({ backend: new EmbeddedBackend(store, service(store)), grader: solGrader() });
let n = 0;
const call = (name: string, args: unknown) => ({ id: `call_${n++}`, type: "function" as const, function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });
const assistant = (...calls: ReturnType<typeof call>[]): Message => ({ role: "assistant", content: null, tool_calls: calls });
const vitals = (mrn: string) => ({
  resourceType: "Observation",
  category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
  code: { text: "BP" },
  effectiveDateTime: "2023-11-13T10:15:00+00:00",
  status: "final",
  valueString: "118/77 mmHg",
  subject: { reference: `Patient/${mrn}` },
});

describe("tool protocol definitions", () => {
  it("exports the ten tools as OpenAI tools JSON generated from zod", () => {
    const tools = openAITools();
    expect(tools.map((t) => t.function.name)).toEqual([
      "fhir_patient_search",
      "fhir_observation_search",
      "fhir_vitals_search",
      "fhir_vitals_create",
      "fhir_condition_search",
      "fhir_procedure_search",
      "fhir_medication_request_search",
      "fhir_medication_request_create",
      "fhir_service_request_create",
      "finish",
    ]);
    for (const t of tools) {
      expect(t.type).toBe("function");
      expect(t.function.parameters.type).toBe("object");
      expect(t.function.description).toBeTruthy();
      expect(JSON.parse(JSON.stringify(t))).toEqual(t);
    }
    const obs = tools.find((t) => t.function.name === "fhir_observation_search")!.function.parameters;
    expect(obs.required).toEqual(["patient", "code"]);
    const finish = tools.find((t) => t.function.name === "finish")!.function.parameters as { properties: { value: { type: string } } };
    expect(finish.properties.value.type).toBe("array");
  });

  it("maps each call to exactly one FHIR request", () => {
    expect(planToolCall("fhir_patient_search", JSON.stringify({ family: "O'Neil Smith", birthdate: "1953-11-13" }))).toMatchObject({
      kind: "GET",
      path: "Patient?family=O'Neil%20Smith&birthdate=1953-11-13&_count=5000",
    });
    expect(planToolCall("fhir_observation_search", JSON.stringify({ patient: "S1", code: "K", date: ["ge2023-01-01", "le2023-12-31"], _count: 10 }))).toMatchObject({
      path: "Observation?patient=S1&code=K&date=ge2023-01-01&date=le2023-12-31&_count=10",
    });
    expect(planToolCall("fhir_vitals_search", JSON.stringify({ patient: "S1" }))).toMatchObject({ path: "Observation?patient=S1&category=vital-signs&_count=5000" });
    expect(planToolCall("fhir_medication_request_search", JSON.stringify({ patient: "S1", date: "ge2023" }))).toMatchObject({
      path: "MedicationRequest?patient=S1&authoredon=ge2023&_count=5000",
    });
    expect(planToolCall("fhir_vitals_create", JSON.stringify(vitals("S1")))).toMatchObject({ kind: "POST", path: "Observation" });
    expect(planToolCall("finish", JSON.stringify({ value: [1, "a", null] }))).toEqual({ kind: "FINISH", tool: "finish", value: [1, "a", null] });
  });

  it.each([
    ["fhir_observation_search", { code: "K" }, /^Error: invalid argument patient for fhir_observation_search: /],
    ["fhir_observation_search", { patient: 5, code: "K" }, /^Error: invalid argument patient for fhir_observation_search: .*string/],
    ["fhir_observation_search", { patient: "S1", code: "K", colour: "red" }, /^Error: invalid argument .*colour|unrecognized/i],
    ["fhir_observation_search", "{not json", /^Error: arguments of fhir_observation_search are not valid JSON/],
    ["fhir_patient_search", {}, /^Error: invalid argument family for fhir_patient_search: give at least one/],
    ["fhir_vitals_create", { ...vitals("S1"), subject: "S1" }, /^Error: invalid argument subject for fhir_vitals_create/],
    ["finish", { value: [{ a: 1 }] }, /^Error: invalid argument value\.0 for finish/],
    ["fhir_teleport", {}, /^Error: unknown tool "fhir_teleport"/],
  ])("%s %j -> error naming the field", (name, args, message) => {
    const plan = planToolCall(name, typeof args === "string" ? args : JSON.stringify(args));
    expect(plan.kind).toBe("INVALID");
    if (plan.kind === "INVALID") expect(plan.error).toMatch(message);
  });
});

describe("MedAgentEnv, tool protocol", () => {
  it("executes several calls in order, writes in the overlay, errors as tool messages, finish ends", async () => {
    const env = new MedAgentEnv(config);
    const reset = await env.reset({ task: task("tools", MRNS[0], [3.7]), protocol: "tools" });
    expect(reset.observation.map((m) => m.role)).toEqual(["system", "user"]);
    expect(reset.observation[1]!.content).toContain("Question: What is the MRN");
    expect(reset.tools).toHaveLength(10);

    const turn1 = assistant(
      call("fhir_observation_search", { patient: MRNS[0], code: "K" }),
      call("fhir_vitals_create", vitals(MRNS[0]!)),
      call("fhir_vitals_search", { patient: MRNS[0] }),
      call("fhir_teleport", {}),
      call("fhir_observation_search", { patient: 5 }),
    );
    const s1 = await env.step(turn1);
    expect(s1.observation.map((m) => [m.role, m.tool_call_id])).toEqual(turn1.tool_calls!.map((c) => ["tool", c.id]));
    expect(JSON.parse(s1.observation[0]!.content!).total).toBe(3);
    expect(JSON.parse(s1.observation[1]!.content!)).toMatchObject({ resourceType: "Observation", valueString: "118/77 mmHg" });
    expect(JSON.parse(s1.observation[2]!.content!).total).toBe(1);
    expect(s1.observation[3]!.content).toMatch(/^Error: unknown tool/);
    expect(s1.observation[4]!.content).toMatch(/^Error: invalid argument patient/);
    expect(s1.info).toMatchObject({ status: "running", rounds: 1, invalidActions: 2 });

    const s2 = await env.step(assistant(call("fhir_condition_search", { patient: MRNS[0] }), call("finish", { value: [3.7] }), call("fhir_vitals_create", vitals(MRNS[0]!))));
    expect(s2.observation).toHaveLength(1);
    expect(s2).toMatchObject({ reward: 1, terminated: true, info: { status: "completed", result: "[3.7]", rounds: 2 } });

    const rec = env.record();
    expect(rec.actions.map((a) => [a.kind, a.tool, a.accepted])).toEqual([
      ["GET", "fhir_observation_search", undefined],
      ["POST", "fhir_vitals_create", true],
      ["GET", "fhir_vitals_search", undefined],
      ["INVALID", "fhir_teleport", undefined],
      ["INVALID", "fhir_observation_search", undefined],
      ["GET", "fhir_condition_search", undefined],
      ["FINISH", "finish", undefined],
    ]);
    expect(rec.actions[1]).toMatchObject({ url: `${API_BASE}Observation`, body: vitals(MRNS[0]!), response: { status: 201 } });
    expect(JSON.parse(rec.actions[1]!.raw)).toEqual({ name: "fhir_vitals_create", arguments: JSON.stringify(vitals(MRNS[0]!)) });
    expect(rec.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "tool", "tool", "tool", "assistant", "tool"]);
    expect(store.search("Observation", `patient=${MRNS[0]}&category=vital-signs`).total).toBe(0);
  });

  it("counts a create with bad arguments as a rejected POST", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), protocol: "tools" });
    await env.step(assistant(call("fhir_service_request_create", { resourceType: "ServiceRequest" })));
    expect(env.record().actions[0]).toMatchObject({ kind: "POST", tool: "fhir_service_request_create", accepted: false });
  });

  it("records creates without executing them with writes=record", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), protocol: "tools", writes: "record" });
    const s = await env.step(assistant(call("fhir_vitals_create", vitals(MRNS[1]!)), call("fhir_vitals_search", { patient: MRNS[1] })));
    expect(s.observation[0]!.content).toBe(RECORDED_REPLY);
    expect(JSON.parse(s.observation[1]!.content!).total).toBe(0);
  });

  it("ends with invalid_action when the model answers without tool calls", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), protocol: "tools" });
    const s = await env.step({ role: "assistant", content: "The answer is 42." });
    expect(s).toMatchObject({ terminated: true, reward: 0, info: { status: "invalid_action" } });
  });

  it("rejects messages that are not assistant messages", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), protocol: "tools" });
    await expect(env.step({ role: "user", content: "hi" })).rejects.toThrow(EnvInputError);
    await expect(env.step({ role: "assistant", content: null, tool_calls: [{ id: 1 }] } as never)).rejects.toThrow(/tool_calls\.0\.id/);
    expect(env.info!.status).toBe("running");
  });

  it("offers fhir_service_request_search only when configured", async () => {
    const plain = new MedAgentEnv(config);
    await plain.reset({ task: task("t"), protocol: "tools" });
    const s0 = await plain.step(assistant(call("fhir_service_request_search", { patient: MRNS[0] })));
    expect(s0.observation[0]!.content).toMatch(/^Error: unknown tool "fhir_service_request_search"/);

    const extended = new MedAgentEnv(new EnvConfig({ backend: config.backend, grader: solGrader(), tools: [...DEFAULT_TOOL_NAMES, ...EXTRA_TOOL_NAMES] }));
    const reset = await extended.reset({ task: task("t"), protocol: "tools" });
    expect((reset.tools as { function: { name: string } }[]).map((t) => t.function.name)).toContain("fhir_service_request_search");
    const s1 = await extended.step(
      assistant(
        call("fhir_service_request_create", {
          resourceType: "ServiceRequest",
          code: { coding: [{ system: "http://snomed.info/sct", code: "306181000000106" }] },
          authoredOn: "2023-11-13T10:15:00+00:00",
          status: "active",
          intent: "order",
          priority: "stat",
          subject: { reference: `Patient/${MRNS[0]}` },
        }),
        call("fhir_service_request_search", { patient: MRNS[0], status: "active" }),
      ),
    );
    expect(JSON.parse(s1.observation[1]!.content!).total).toBe(1);
    expect(extended.record().actions[1]!.url).toBe(`${API_BASE}ServiceRequest?patient=${MRNS[0]}&status=active&_count=5000`);
    expect(() => new EnvConfig({ backend: config.backend, tools: ["fhir_nope"] })).toThrow(/unknown tool "fhir_nope"/);
  });

  it("stops at the round limit", async () => {
    const env = new MedAgentEnv(config);
    await env.reset({ task: task("t"), protocol: "tools", maxRounds: 1 });
    const s = await env.step(assistant(call("fhir_patient_search", { identifier: MRNS[2] })));
    expect(s).toMatchObject({ truncated: true, terminated: false, info: { status: "limit_reached" } });
    expect(JSON.parse(s.observation[0]!.content!).entry[0].resource.id).toBe(MRNS[2]);
  });
});
