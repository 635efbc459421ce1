// The expert's requests as tool calls (PROTOCOL.md section 2), and tool messages as Replies.
import type { Message, ToolCall } from "../../env/core/index.ts";
import * as py from "../../env/python/index.ts";
import type { Reply, Request } from "./plan.ts";

// MedAgentBench V2's tools (env/protocol/tools.ts). It has no ServiceRequest search, so a plan that would
// look for existing orders cannot (see `searchableWith`); its searches take fewer filters than the
// plans use, so `localFilter` applies the rest to what comes back.
const SEARCH_TOOLS: Record<string, string> = {
  Patient: "patient_search",
  Observation: "fhir_observation_search",
  Condition: "fhir_condition_search",
  Procedure: "fhir_procedure_search",
  MedicationRequest: "fhir_medication_request_search",
};
const CREATE_TOOLS: Record<string, string> = {
  Observation: "fhir_vitals_create",
  MedicationRequest: "fhir_medication_request_create",
  ServiceRequest: "fhir_service_request_create",
};
/** The procedure search requires a date filter: one every performed procedure matches. */
const ANY_DATE = "ge1900-01-01";
const EXPLANATION = "Reading the chart for the task.";

/** Resource types the offered tools can search (the original's search tools when the list is not given). */
export function searchableWith(tools: unknown[] | undefined): ReadonlySet<string> {
  const offered = tools?.map((t) => (t as { function?: { name?: unknown } })?.function?.name).filter((n): n is string => typeof n === "string");
  const names = new Set(offered ?? Object.values(SEARCH_TOOLS));
  if (names.has("fhir_patient_search")) names.add("patient_search");
  return new Set(Object.entries(SEARCH_TOOLS).flatMap(([type, name]) => (names.has(name) ? [type] : [])));
}

/** Whether the offered tools include the calculator (the original's do when the list is not given). */
export const calculatorOffered = (tools: unknown[] | undefined): boolean => !tools || tools.some((t) => (t as { function?: { name?: unknown } })?.function?.name === "calculator");

/** The verifiers port names the patient search fhir_patient_search. */
export function patientSearchName(tools: unknown[] | undefined): string {
  const names = tools?.map((t) => (t as { function?: { name?: unknown } })?.function?.name);
  return names?.includes("fhir_patient_search") && !names.includes("patient_search") ? "fhir_patient_search" : "patient_search";
}

/**
 * Whether writes may share a turn (with each other and with the finish). The verifiers port (its
 * tools name the patient search fhir_patient_search) logs a turn's calls before their replies, so a
 * create that is not alone in its turn is not counted and a finish turn holding one fails its grader:
 * under its tools every write and the finish get a turn of their own.
 */
export const batchesWrites = (tools: unknown[] | undefined): boolean => patientSearchName(tools) !== "fhir_patient_search";

/** What the plan asked for that the tool cannot send, applied to the results (status only). */
export function localFilter(resourceType: string, params: [string, string][]): ((r: { [k: string]: unknown }) => boolean) | undefined {
  const status = resourceType === "MedicationRequest" ? params.find(([k]) => k === "status")?.[1] : undefined;
  return status === undefined ? undefined : (r) => status.split(",").includes(String(r.status));
}

const param = (params: [string, string][], key: string): string | null => params.find(([k]) => k === key)?.[1] ?? null;

function searchArgs(resourceType: string, params: [string, string][]): Record<string, unknown> {
  const patient = param(params, "patient");
  switch (resourceType) {
    case "Patient":
      return { birthdate: param(params, "birthdate"), family: param(params, "family"), given: param(params, "given"), identifier: param(params, "identifier") };
    case "Observation":
    case "Condition":
      return { search_params: { code: param(params, "code"), patient }, explanation: EXPLANATION };
    case "Procedure":
      return { search_params: { code: param(params, "code"), date: param(params, "date") ?? ANY_DATE, patient }, explanation: EXPLANATION };
    default:
      return { category: param(params, "category"), date: null, patient };
  }
}

export function toolCall(request: Request, id: string, tools?: unknown[]): ToolCall {
  switch (request.kind) {
    case "GET": {
      const name = request.resourceType === "Patient" ? patientSearchName(tools) : SEARCH_TOOLS[request.resourceType];
      if (!name || request.url) throw new Error(`the tool protocol cannot search ${request.resourceType}`);
      return { id, type: "function", function: { name, arguments: JSON.stringify(searchArgs(request.resourceType, request.params)) } };
    }
    case "POST": {
      const name = CREATE_TOOLS[request.resourceType];
      if (!name) throw new Error(`the tool protocol cannot create ${request.resourceType}`);
      return { id, type: "function", function: { name, arguments: JSON.stringify(fitted(toolBody(request.body), parametersOf(tools, name))) } };
    }
    case "CALC":
      return { id, type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression: request.expression }) } };
    case "FINISH":
      return { id, type: "function", function: { name: "finish", arguments: finishArguments(request.answer) } };
  }
}

/** finish's arguments: its value is a list of scalars, so an object in it (a workflows report) goes as its JSON text. */
export function finishArguments(answer: readonly unknown[]): string {
  return JSON.stringify({ value: answer.map((v) => (v && typeof v === "object" ? JSON.stringify(v) : v)) });
}

type Schema = { properties?: Record<string, Schema>; additionalProperties?: unknown; items?: Schema };

/** The JSON Schema of a tool's arguments as offered, when the list is given. */
function parametersOf(tools: unknown[] | undefined, name: string): Schema | undefined {
  const tool = tools?.find((t) => (t as { function?: { name?: unknown } })?.function?.name === name) as { function?: { parameters?: Schema } } | undefined;
  return tool?.function?.parameters;
}

/**
 * A value with the keys its schema forbids left out (objects declared `additionalProperties: false`,
 * at any depth). The verifiers port's creates are functions of keyword arguments: a key they do not
 * declare fails the call, where the original's models ignore it.
 */
function fitted(value: unknown, schema: Schema | undefined): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) return value.map((v) => fitted(v, schema.items));
  const o = obj(value);
  if (!o || !schema.properties) return value;
  const entries = Object.entries(o).filter(([k]) => schema.additionalProperties !== false || k in schema.properties!);
  return Object.fromEntries(entries.map(([k, v]) => [k, fitted(v, schema.properties![k])]));
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Codings as the original's models require them (system, code and display all strings). */
function codings(concept: Obj | undefined, fallback: string): Obj[] {
  const list = Array.isArray(concept?.coding) ? (concept!.coding as unknown[]).map(obj).filter((c): c is Obj => !!c) : [];
  return list.map((c) => ({ ...c, system: text(c.system) ?? "", code: text(c.code) ?? "", display: text(c.display) ?? text(concept?.text) ?? fallback }));
}

function quantity(v: unknown, unit: string): Obj {
  const q = obj(v) ?? {};
  return { ...q, value: typeof q.value === "number" ? q.value : 1, unit: text(q.unit) ?? unit };
}

/** The rate the original's create requires, from the dose and the schedule: dose x frequency per period
 *  (heparin 5000 U every 8 h: 625 U/h); a dose without a schedule (one dose, or as needed) once a day. */
function rateOf(dose: Obj, timing: unknown): Obj {
  const repeat = obj(obj(timing)?.repeat);
  const frequency = typeof repeat?.frequency === "number" ? repeat.frequency : undefined;
  const period = typeof repeat?.period === "number" && repeat.period > 0 ? repeat.period : undefined;
  const periodUnit = text(repeat?.periodUnit);
  const value = dose.value as number;
  if (frequency === undefined || period === undefined || !periodUnit) return { value, unit: `${dose.unit}/d` };
  return { value: Math.round(((value * frequency) / period) * 1000) / 1000, unit: `${dose.unit}/${periodUnit}` };
}

/** A plan's order as the original's create tools require it: every required field present with the
 *  original's types (a plan written for FHIR may use a route object, a note list, or leave out the
 *  fields the text protocol does not need). What the graders read is left as the plan wrote it: the
 *  official graders read dosing only in v1 task5 (route, dose and rate) and task9 (route and dose),
 *  whose plans give them; new_refsol reads none. Every plan gives its dose; the rate comes from the dose
 *  and schedule. Only a stop order copying an existing order that has no dose or route gets a stand-in
 *  (1 "dose", route "as directed"): the original's create requires them and no grader reads them. */
export function toolBody(body: Obj): Obj {
  const out: Obj = { ...body };
  if (body.resourceType === "ServiceRequest") {
    const code = obj(body.code) ?? {};
    const label = text(code.text) ?? text(codings(code, "order")[0]?.display) ?? "order";
    out.code = { ...code, coding: codings(code, label) };
    const notes = Array.isArray(body.note) ? body.note.map(obj).filter((n): n is Obj => !!n) : obj(body.note) ? [obj(body.note)!] : [];
    out.note = notes.length === 1 ? notes[0] : { text: notes.map((n) => text(n.text) ?? "").filter(Boolean).join("\n") || label };
    out.priority ??= "routine";
    out.occurrenceDateTime ??= body.authoredOn;
  }
  if (body.resourceType === "MedicationRequest") {
    const med = obj(body.medicationCodeableConcept) ?? {};
    const coding = codings(med, "medication");
    out.medicationCodeableConcept = { ...med, coding, text: text(med.text) ?? text(coding[0]?.display) ?? "medication" };
    const dosage = Array.isArray(body.dosageInstruction) ? body.dosageInstruction.map(obj).filter((d): d is Obj => !!d) : [];
    out.dosageInstruction = (dosage.length ? dosage : [{}]).map((d) => ({
      ...d,
      route: text(d.route) ?? text(obj(d.route)?.text) ?? "as directed",
      doseAndRate: (Array.isArray(d.doseAndRate) && d.doseAndRate.length ? d.doseAndRate.map((x) => obj(x) ?? {}) : [{}]).map((x) => {
        const doseQuantity = quantity(x.doseQuantity, "dose");
        return { ...x, doseQuantity, rateQuantity: obj(x.rateQuantity) ? quantity(x.rateQuantity, `${doseQuantity.unit}/d`) : rateOf(doseQuantity, d.timing) };
      }),
    }));
  }
  return out;
}

/** The reply a tool message carries (a long one may come in parts, parsed with `memo`). */
export function parseToolReply(content: string): Reply {
  if (content.startsWith("Error")) return { ok: false, error: content.slice(0, 300) };
  // The original's tools answer Python's str() of the JSON they got (dicts with single quotes, True, None).
  if (content.startsWith("{") || content.startsWith("[")) {
    try {
      return { ok: true, json: py.toJs(py.literalEval(content), { intsAsNumbers: true }) };
    } catch {
      /* not a Python literal: JSON or text below */
    }
  }
  try {
    return { ok: true, json: JSON.parse(content) };
  } catch {
    return { ok: true, json: content };
  }
}

export function countToolCalls(messages: readonly Message[]): number {
  return messages.reduce((n, m) => n + (m.role === "assistant" ? (m.tool_calls?.length ?? 0) : 0), 0);
}
