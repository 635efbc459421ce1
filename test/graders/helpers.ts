// Hand-built base stores and action logs for grader tests.
import { createStoreBuilder, type FhirReader, type FhirResource, type FhirStore } from "../../env/fhir/index.ts";
import { grade, type GradeResult } from "../../env/graders/index.ts";
import { historyActions, originalHistory, type Action, type EpisodeStatus, type Protocol, type TraceStep } from "../../env/protocol/index.ts";
import { Task, type TaskInput } from "../../env/tasks/index.ts";

export const API = "http://localhost:8080/fhir/";
export const MRN = "S1000001";
const META = { versionId: "1", lastUpdated: "2024-12-30T10:00:00.000+00:00", source: "#abcdefabcdefabcd" };

export function patient(mrn = MRN, birthDate = "1960-05-20", family = "Rivera", given = "Ana"): FhirResource {
  return {
    resourceType: "Patient",
    id: mrn,
    meta: META,
    identifier: [{ use: "usual", type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "MR" }] }, value: mrn }],
    name: [{ use: "official", family, given: [given] }],
    gender: "female",
    birthDate,
  };
}

let nextId = 1000;
export function obs(code: string, when: string, value: number, mrn = MRN): FhirResource {
  return {
    resourceType: "Observation",
    id: String(nextId++),
    meta: META,
    status: "final",
    code: { coding: [{ system: "http://loinc.org", code, display: code }], text: code },
    subject: { reference: `Patient/${mrn}` },
    effectiveDateTime: when,
    valueQuantity: { value, unit: "x" },
  };
}

export function proc(code: string, when: string, mrn = MRN): FhirResource {
  return {
    resourceType: "Procedure",
    id: String(nextId++),
    meta: META,
    status: "completed",
    code: { coding: [{ system: "http://example.org", code, display: code }], text: code },
    subject: { reference: `Patient/${mrn}` },
    performedDateTime: when,
  };
}

export function medReq(text: string, status = "active", mrn = MRN, authoredOn = "2023-11-01T10:00:00+00:00"): FhirResource {
  return {
    resourceType: "MedicationRequest",
    id: String(nextId++),
    meta: META,
    status,
    intent: "order",
    medicationCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "0000-0000-00" }], text },
    subject: { reference: `Patient/${mrn}` },
    authoredOn,
  };
}

export function condition(code: string, mrn = MRN): FhirResource {
  return {
    resourceType: "Condition",
    id: String(nextId++),
    meta: META,
    code: { coding: [{ system: "http://hl7.org/fhir/sid/icd-10-cm", code, display: code }], text: code },
    subject: { reference: `Patient/${mrn}` },
  };
}

export function serviceReq(code: string, status = "active", mrn = MRN): FhirResource {
  return {
    resourceType: "ServiceRequest",
    id: String(nextId++),
    meta: META,
    status,
    intent: "order",
    code: { coding: [{ system: "http://example.org", code }] },
    subject: { reference: `Patient/${mrn}` },
  };
}

export function store(...resources: FhirResource[]): FhirStore {
  const b = createStoreBuilder();
  b.addResource(patient());
  for (const r of resources) b.addResource(r);
  return b.build();
}

const ACCEPTED = "POST request accepted and executed successfully. Please call FINISH if you have got answers for all the questions and finished all the requested tasks";

/** A text-protocol log from agent turns, replies as the official harness writes them (last turn: none). */
export function textLog(turns: string[]): { actions: Action[]; result?: string } {
  let result: string | undefined;
  const actions = turns.map((raw, i): Action => {
    const r = raw.trim().replaceAll("```tool_code", "").replaceAll("```", "").trim();
    let reply: string;
    let kind: Action["kind"];
    if (r.startsWith("GET")) {
      kind = "GET";
      reply = 'Here is the response from the GET request:\n{"resourceType": "Bundle"}. Please call FINISH if you have got answers for all the questions and finished all the requested tasks';
    } else if (r.startsWith("POST")) {
      kind = "POST";
      try {
        JSON.parse(r.split("\n").slice(1).join("\n"));
        reply = ACCEPTED;
      } catch {
        reply = "Invalid POST request";
      }
    } else if (r.startsWith("FINISH(")) {
      kind = "FINISH";
      result = r.slice(7, -1);
      reply = "";
    } else {
      kind = "INVALID";
      reply = "";
    }
    return { kind, raw, ...(i < turns.length - 1 ? { reply } : {}) };
  });
  return { actions, ...(result !== undefined ? { result } : {}) };
}

export const post = (type: string, body: unknown) => `POST ${API}${type}\n${JSON.stringify(body)}`;

export function task(input: Partial<TaskInput> & Pick<TaskInput, "suite" | "type">): Task {
  return Task.parse({ id: `t-${input.type}`, instruction: "", context: "", eval_MRN: MRN, ...input });
}

export function gradeText(t: Task, base: FhirReader, turns: string[], status: EpisodeStatus = "completed", protocol: Protocol = "text"): GradeResult {
  const { actions, result } = textLog(turns);
  return grade({ task: t, protocol, status, actions, ...(result !== undefined ? { result } : {}), base, apiBase: API });
}

/** Tool-protocol run as the original V2 loop logs it: each create call then its output (a create that is
 *  not accepted raised, so it has no output and the run ends there), then finish; graded on the
 *  `_to_task_result` history of that trace. */
export function gradeTools(t: Task, base: FhirStore, creates: { type: string; body: unknown; accepted?: boolean }[], finish: unknown): GradeResult {
  const trace: TraceStep[] = [];
  const name = (type: string) => (type === "ServiceRequest" ? "fhir_service_request_create" : type === "Observation" ? "fhir_vitals_create" : "fhir_medication_request_create");
  let ended = false;
  creates.forEach((c, i) => {
    if (ended) return;
    trace.push({ type: "tool_call", name: name(c.type), arguments: JSON.stringify(c.body), callId: `c${i}` });
    if (c.accepted === false) ended = true;
    else trace.push({ type: "tool_output", callId: `c${i}` });
  });
  if (!ended) trace.push({ type: "tool_call", name: "finish", arguments: JSON.stringify({ value: finish }), callId: "f" }, { type: "tool_output", callId: "f" });
  const actions = historyActions(originalHistory(trace, API));
  return grade({ task: t, protocol: "tools", status: "completed", actions, result: ended ? "[]" : JSON.stringify(finish), base, apiBase: API });
}
