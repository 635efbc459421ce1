// The expert as a pure policy: what it reads off a task, and how it shapes turns per protocol.
import { describe, expect, it } from "vitest";
import type { Message } from "../../env/core/index.ts";
import { Task } from "../../env/tasks/index.ts";
import { expertTurn } from "../../rollout/expert/policy.ts";
import { taskMrn, taskNow } from "../../rollout/expert/index.ts";
import { nameAndDob } from "../../rollout/expert/facts.ts";

const task = (o: Partial<Task> & Pick<Task, "suite" | "type">): Task => Task.parse({ id: "t1", instruction: "", context: "", ...o });
const BUNDLE = (resources: unknown[]) => JSON.stringify({ resourceType: "Bundle", type: "searchset", total: resources.length, entry: resources.map((resource) => ({ resource })) });

describe("expert facts", () => {
  it("reads NOW as the graders do", () => {
    expect(taskNow(task({ suite: "mab-v1", type: "task4", context: "It's 2020-01-01T00:00:00+00:00 now" }))).toBe("2023-11-13T10:15:00+00:00");
    expect(taskNow(task({ suite: "mab-v2", type: "task3", context: "The code is X. it's 2023-11-07T22:47:00+00:00 now." }))).toBe("2023-11-07T22:47:00+00:00");
    expect(taskNow(task({ suite: "mab-v2", type: "task3", context: "Between 2023-01-01T00:00:00+00:00 and 2023-02-01T08:00:00+00:00." }))).toBe("2023-02-01T08:00:00+00:00");
    expect(taskNow(task({ suite: "mab-v2", type: "task1", context: "No clock here." }))).toBe("2023-11-07T22:47:00+00:00");
  });

  it("reads the patient and the lookup terms from the instruction", () => {
    expect(taskMrn(task({ suite: "mab-v1", type: "task4", instruction: "most recent magnesium of the patient S3032536 within", eval_MRN: "S0000000" }))).toBe("S3032536");
    expect(nameAndDob(task({ suite: "mab-v1", type: "task1", instruction: "What’s the MRN of the patient with name Peter Stafford and DOB of 1932-12-29?" }))).toEqual({ given: "Peter", family: "Stafford", birthDate: "1932-12-29" });
    expect(nameAndDob(task({ suite: "mab-v1", type: "task1", instruction: "Look up the MRN of the patient named Mary Ann Smith, born 1966-02-16." }))).toEqual({ given: "Mary Ann", family: "Smith", birthDate: "1966-02-16" });
  });
});

describe("expert turns", () => {
  const k = task({ suite: "mab-v1", type: "task9", instruction: "Check patient S1234567's most recent potassium level." });
  const low = { resourceType: "Observation", id: "5", effectiveDateTime: "2023-11-12T08:00:00+00:00", valueQuantity: { value: 3.1 } };
  const older = { resourceType: "Observation", id: "9", effectiveDateTime: "2023-11-01T08:00:00+00:00", valueQuantity: { value: 4.2 } };

  it("text: one request per turn, reading the env's GET reply", () => {
    const prompt: Message = { role: "user", content: "prompt" };
    const first = expertTurn({ task: k, protocol: "text", messages: [prompt] }, { apiBase: "http://h/fhir/" });
    expect(first).toBe("GET http://h/fhir/Observation?patient=S1234567&code=K&_count=5000");
    const reply: Message = { role: "user", content: `Here is the response from the GET request:\n${BUNDLE([low, older])}. Please call FINISH if you have got answers for all the questions and finished all the requested tasks` };
    const second = expertTurn({ task: k, protocol: "text", messages: [prompt, { role: "assistant", content: first as string }, reply] }, { apiBase: "http://h/fhir/" }) as string;
    expect(second.split("\n")[0]).toBe("POST http://h/fhir/MedicationRequest");
    // latest by time, not by id: 3.1 on Nov 12 (id 5) beats 4.2 on Nov 1 (id 9); dose (3.5 - 3.1) / 0.1 * 10 = 40
    expect(JSON.parse(second.slice(second.indexOf("\n") + 1)).dosageInstruction[0].doseAndRate[0].doseQuantity).toEqual({ value: 40, unit: "mEq" });
  });

  it("tools: the dose is worked out with the calculator, then the orders and finish go out together", () => {
    const first = expertTurn({ task: k, protocol: "tools", messages: [{ role: "user", content: "q" }] }) as Message;
    expect(first.tool_calls!.map((c) => c.function.name)).toEqual(["fhir_observation_search"]);
    const messages: Message[] = [{ role: "user", content: "q" }, first, { role: "tool", tool_call_id: first.tool_calls![0]!.id, content: BUNDLE([low, older]) }];
    const calc = expertTurn({ task: k, protocol: "tools", messages }) as Message;
    expect(calc.tool_calls!.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([["calculator", { expression: "(3.5 - 3.1) / 0.1 * 10" }]]);
    // Python's answer (the float error included): the plan rounds it to 0.01 mEq.
    messages.push(calc, { role: "tool", tool_call_id: calc.tool_calls![0]!.id, content: "39.99999999999999" });
    const second = expertTurn({ task: k, protocol: "tools", messages }) as Message;
    expect(second.tool_calls!.map((c) => c.function.name)).toEqual(["fhir_medication_request_create", "fhir_service_request_create", "finish"]);
    expect(JSON.parse(second.tool_calls![2]!.function.arguments)).toEqual({ value: [3.1] });
    expect(new Set([first, calc, second].flatMap((m) => m.tool_calls!.map((c) => c.id))).size).toBe(5);
    // What refsol reads (route, dose) as the plan wrote it; the rate the create requires: one dose that day.
    expect(JSON.parse(second.tool_calls![0]!.function.arguments).dosageInstruction).toEqual([{ route: "oral", doseAndRate: [{ doseQuantity: { value: 40, unit: "mEq" }, rateQuantity: { value: 40, unit: "mEq/d" } }] }]);
  });

  it("tools: medication orders carry their real dose, and a rate from dose and schedule", () => {
    const dvt = task({ suite: "mab-v2", type: "task2", instruction: "Review DVT prophylaxis for patient S1234567.", context: "It's 2023-11-13T10:15:00+00:00 now" });
    const enoxaparin = {
      resourceType: "MedicationRequest",
      id: "77",
      status: "active",
      medicationCodeableConcept: { text: "enoxaparin 40 mg/0.4 mL syringe" },
      dosageInstruction: [{ text: "40 mg, subcutaneous, daily", timing: { repeat: { frequency: 1, period: 1, periodUnit: "d" } }, route: { text: "subcutaneous" }, doseAndRate: [{ doseQuantity: { value: 40, unit: "mg" } }] }],
    };
    const first = expertTurn({ task: dvt, protocol: "tools", messages: [{ role: "user", content: "q" }] }) as Message;
    const messages: Message[] = [{ role: "user", content: "q" }, first, { role: "tool", tool_call_id: first.tool_calls![0]!.id, content: BUNDLE([enoxaparin]) }];
    const second = expertTurn({ task: dvt, protocol: "tools", messages }) as Message;
    const [heparin, stop] = second.tool_calls!.filter((c) => c.function.name === "fhir_medication_request_create").map((c) => JSON.parse(c.function.arguments));
    // Heparin 5000 U every 8 h: 625 U/h.
    expect(heparin.dosageInstruction[0]).toMatchObject({ route: "subcutaneous", doseAndRate: [{ doseQuantity: { value: 5000, unit: "U" }, rateQuantity: { value: 625, unit: "U/h" } }] });
    // The stop order keeps the existing order's dose; its rate follows the order's own schedule.
    expect(stop).toMatchObject({ status: "stopped", dosageInstruction: [{ route: "subcutaneous", doseAndRate: [{ doseQuantity: { value: 40, unit: "mg" }, rateQuantity: { value: 40, unit: "mg/d" } }] }] });
  });
});
