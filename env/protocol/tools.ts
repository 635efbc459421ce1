// The tool protocol (PROTOCOL.md section 2): zod-defined tools, their OpenAI `tools` JSON, and the
// mapping of one tool call to exactly one FHIR request.
import { z } from "zod";

const id = z.string().min(1);
const dateParam = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .describe("A FHIR date search value with an optional prefix (eq, ge, le, gt, lt); a list gives a range, e.g. [\"ge2023-01-01\", \"le2023-12-31\"].");
const count = z.number().int().min(1).max(5000).describe("Maximum number of results (default 5000).");
const patient = id.describe("The patient's FHIR id (MRN), e.g. S1234567.");
const reference = z.looseObject({ reference: z.string().min(1).describe("Patient/<MRN>") });
const coding = z.looseObject({ system: z.string().optional(), code: z.string().optional(), display: z.string().optional() });

export const fhirPatientSearch = z
  .strictObject({
    family: z.string().min(1).optional().describe("Family (last) name."),
    given: z.string().min(1).optional().describe("Given (first) name."),
    birthdate: z.string().min(1).optional().describe("Date of birth, YYYY-MM-DD."),
    identifier: z.string().min(1).optional().describe("The MRN."),
    _count: count.optional(),
  })
  .refine((a) => a.family || a.given || a.birthdate || a.identifier, {
    message: "give at least one of family, given, birthdate, identifier",
    path: ["family"],
  })
  .describe("Search patients by name, date of birth or MRN.");

export const fhirObservationSearch = z
  .strictObject({ patient, code: id.describe("Lab code, e.g. K, MG, GLU, A1C."), date: dateParam.optional(), _count: count.optional() })
  .describe("Search a patient's lab results for one lab code.");

export const fhirVitalsSearch = z
  .strictObject({ patient, category: z.literal("vital-signs").default("vital-signs"), date: dateParam.optional(), _count: count.optional() })
  .describe("Search a patient's vital signs (blood pressure, heart rate, ...).");

export const fhirConditionSearch = z
  .strictObject({ patient, category: z.string().min(1).optional().describe("problem-list-item"), code: id.optional(), _count: count.optional() })
  .describe("Search a patient's problem list.");

export const fhirProcedureSearch = z
  .strictObject({ patient, code: id.optional().describe("CPT or local procedure code."), date: dateParam.optional(), _count: count.optional() })
  .describe("Search procedures performed on a patient.");

export const fhirMedicationRequestSearch = z
  .strictObject({
    patient,
    status: z.string().min(1).optional().describe("e.g. active, completed, stopped."),
    category: z.string().min(1).optional().describe("Inpatient, Outpatient, Community or Discharge."),
    date: dateParam.optional().describe("When the order was written (searches authoredon)."),
    _count: count.optional(),
  })
  .describe("Search a patient's medication orders.");

export const fhirServiceRequestSearch = z
  .strictObject({
    patient,
    code: id.optional().describe("Order code (e.g. a SNOMED or LOINC code)."),
    status: z.string().min(1).optional().describe("e.g. active, completed, revoked."),
    date: dateParam.optional().describe("When the order was written (searches authored)."),
    _count: count.optional(),
  })
  .describe("Search a patient's orders (referrals, lab and procedure orders).");

export const fhirVitalsCreate = z
  .looseObject({
    resourceType: z.literal("Observation").default("Observation"),
    category: z.array(z.looseObject({ coding: z.array(coding) })).describe("[{coding: [{system: http://hl7.org/fhir/observation-category, code: vital-signs, display: Vital Signs}]}]"),
    code: z.looseObject({ text: z.string().min(1).describe("Flowsheet id of what was measured.") }),
    effectiveDateTime: z.string().min(1),
    status: z.string().min(1).describe("final"),
    valueString: z.string(),
    subject: reference,
  })
  .describe("Record a vital-sign Observation.");

export const fhirMedicationRequestCreate = z
  .looseObject({
    resourceType: z.literal("MedicationRequest").default("MedicationRequest"),
    medicationCodeableConcept: z.looseObject({ coding: z.array(coding).optional(), text: z.string().optional() }),
    authoredOn: z.string().min(1),
    dosageInstruction: z.array(z.looseObject({})),
    status: z.string().min(1).describe("active"),
    intent: z.string().min(1).describe("order"),
    subject: reference,
  })
  .describe("Place a medication order.");

export const fhirServiceRequestCreate = z
  .looseObject({
    resourceType: z.literal("ServiceRequest").default("ServiceRequest"),
    code: z.looseObject({ coding: z.array(coding) }),
    authoredOn: z.string().min(1),
    status: z.string().min(1).describe("active"),
    intent: z.string().min(1).describe("order"),
    priority: z.string().min(1).describe("stat or routine"),
    subject: reference,
    note: z.unknown().optional().describe("{text: <free-text comment>}"),
    occurrenceDateTime: z.string().optional(),
  })
  .describe("Place an order for a referral, lab test or procedure.");

export const finishTool = z
  .strictObject({ value: z.array(z.union([z.string(), z.number(), z.null()])).describe("The answers, in order.") })
  .describe("Submit the final answers and end the task.");

type Search = { kind: "search"; type: string; schema: z.ZodType; params: (a: Record<string, unknown>) => [string, unknown][] };
type Create = { kind: "create"; type: string; schema: z.ZodType };
type Finish = { kind: "finish"; schema: z.ZodType };
export type ToolSpec = Search | Create | Finish;

const pick = (a: Record<string, unknown>, ...keys: string[]): [string, unknown][] => keys.map((k) => [k, a[k]]);

/** Every tool by name. */
export const TOOLS: Record<string, ToolSpec> = {
  fhir_patient_search: { kind: "search", type: "Patient", schema: fhirPatientSearch, params: (a) => pick(a, "family", "given", "birthdate", "identifier") },
  fhir_observation_search: { kind: "search", type: "Observation", schema: fhirObservationSearch, params: (a) => pick(a, "patient", "code", "date") },
  fhir_vitals_search: { kind: "search", type: "Observation", schema: fhirVitalsSearch, params: (a) => pick(a, "patient", "category", "date") },
  fhir_vitals_create: { kind: "create", type: "Observation", schema: fhirVitalsCreate },
  fhir_condition_search: { kind: "search", type: "Condition", schema: fhirConditionSearch, params: (a) => pick(a, "patient", "category", "code") },
  fhir_procedure_search: { kind: "search", type: "Procedure", schema: fhirProcedureSearch, params: (a) => pick(a, "patient", "code", "date") },
  fhir_medication_request_search: {
    kind: "search",
    type: "MedicationRequest",
    schema: fhirMedicationRequestSearch,
    params: (a) => [...pick(a, "patient", "status", "category"), ["authoredon", a.date]],
  },
  fhir_medication_request_create: { kind: "create", type: "MedicationRequest", schema: fhirMedicationRequestCreate },
  fhir_service_request_search: {
    kind: "search",
    type: "ServiceRequest",
    schema: fhirServiceRequestSearch,
    params: (a) => [...pick(a, "patient", "code", "status"), ["authored", a.date]],
  },
  fhir_service_request_create: { kind: "create", type: "ServiceRequest", schema: fhirServiceRequestCreate },
  finish: { kind: "finish", schema: finishTool },
};

/** The tool set of PROTOCOL.md section 2 (the default). */
export const DEFAULT_TOOL_NAMES: readonly string[] = [
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
];
/** Opt-in tools beyond the spec's list (e.g. for tasks that must check existing orders). */
export const EXTRA_TOOL_NAMES: readonly string[] = ["fhir_service_request_search"];

export interface OpenAITool {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

const toolJson = new Map<string, OpenAITool>();
/** The OpenAI `tools` array for the named tools (default: the spec's ten), generated from the zod schemas. */
export function openAITools(names: readonly string[] = DEFAULT_TOOL_NAMES): OpenAITool[] {
  return names.map((name) => {
    let t = toolJson.get(name);
    if (!t) {
      const spec = TOOLS[name];
      if (!spec) throw new Error(`unknown tool ${JSON.stringify(name)}; known: ${Object.keys(TOOLS).join(", ")}`);
      const { $schema: _s, description, ...parameters } = z.toJSONSchema(spec.schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
      t = { type: "function", function: { name, description: description as string | undefined, parameters } };
      toolJson.set(name, t);
    }
    return t;
  });
}

const DEFAULT_COUNT = 5000;

/** What one tool call means: a FHIR request, the finish value, or an `Error: ...` text naming the bad field. */
export type ToolCallPlan =
  | { kind: "GET"; tool: string; path: string; args: Record<string, unknown> }
  | { kind: "POST"; tool: string; path: string; body: Record<string, unknown> }
  | { kind: "FINISH"; tool: string; value: (string | number | null)[] }
  /** `create` is set when the call was a create tool whose arguments failed validation (a rejected POST). */
  | { kind: "INVALID"; tool: string; error: string; create?: boolean };

/** `offered`: the tools the model was given (default: the spec's ten); any other name is an unknown tool. */
export function planToolCall(name: string, argumentsText: string, offered: readonly string[] = DEFAULT_TOOL_NAMES): ToolCallPlan {
  const spec = offered.includes(name) ? TOOLS[name] : undefined;
  if (!spec) return { kind: "INVALID", tool: name, error: `Error: unknown tool ${JSON.stringify(name)}; available tools: ${offered.join(", ")}` };
  const invalid = (error: string): ToolCallPlan => ({ kind: "INVALID", tool: name, error, create: spec.kind === "create" || undefined });
  let raw: unknown;
  try {
    raw = argumentsText.trim() === "" ? {} : JSON.parse(argumentsText);
  } catch (e) {
    return invalid(`Error: arguments of ${name} are not valid JSON: ${(e as Error).message}`);
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join(".") : "(arguments)";
    return invalid(`Error: invalid argument ${field} for ${name}: ${issue.message}`);
  }
  const args = parsed.data as Record<string, unknown>;
  if (spec.kind === "finish") return { kind: "FINISH", tool: name, value: args.value as (string | number | null)[] };
  if (spec.kind === "create") return { kind: "POST", tool: name, path: spec.type, body: args };
  const qs: string[] = [];
  for (const [k, v] of spec.params(args)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) qs.push(`${k}=${encodeURIComponent(String(one))}`);
  }
  qs.push(`_count=${args._count ?? DEFAULT_COUNT}`);
  return { kind: "GET", tool: name, path: `${spec.type}?${qs.join("&")}`, args };
}
