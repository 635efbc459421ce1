// The tool protocol (PROTOCOL.md section 2): MedAgentBench V2's tools (names, argument structure,
// required fields and types as the original V2 code defines them), their OpenAI `tools` JSON, and
// what one call means. Descriptions are ehrgym's own unless reference schemas are loaded
// (`loadToolSchemas`, the `--tool-schemas` flag).
import { readFileSync } from "node:fs";
import { z } from "zod";
import * as py from "../python/index.ts";
import { UserError, utf8Text } from "../util/index.ts";

/** Whose rules a tool-protocol episode follows: the original V2 code (default) or the verifiers port. */
export const V2Semantics = z.enum(["original", "medarc"]);
export type V2Semantics = z.infer<typeof V2Semantics>;

// The original's argument models are pydantic v2 in lax mode (env/python/pydantic.ts): `Optional[str]`
// without a default is required but may be null; nested models ignore unknown keys and the three `*Args`
// wrappers forbid them; `str` takes only strings, `float` numbers, booleans and numeric strings. What a
// schema outputs is the model's dump: declared fields only, coerced.
const str = py.strField;
const nullableStr = py.optionalStrField;
const subject = () => py.ignoreModel({ reference: str().describe("Patient/<MRN>") });
const coding = () => py.ignoreModel({ system: str(), code: str(), display: str() });

const patientSearch = py
  .ignoreModel({
    birthdate: nullableStr().describe("Date of birth, YYYY-MM-DD (null when unknown)."),
    family: nullableStr().describe("Family (last) name (null when unknown)."),
    given: nullableStr().describe("Given name(s) (null when unknown)."),
    identifier: nullableStr().describe("The MRN (null when unknown)."),
  })
  .describe("Find patients by name, date of birth or MRN.");

const vitalsSearch = py
  .ignoreModel({
    category: str().describe('Always "vital-signs".'),
    date: nullableStr().describe("FHIR date filter on when the vital was taken, e.g. ge2023-11-12 (null for all)."),
    patient: str().describe("The patient's MRN."),
  })
  .describe("List a patient's vital-sign and flowsheet observations.");

const observationSearch = py
  .forbidModel({
    search_params: py.ignoreModel({
      code: str().describe("The lab's short code (K, MG, GLU, A1C, ...), not a LOINC code."),
      patient: str().describe("The patient's MRN."),
    }),
    explanation: str().describe("Why this search is needed."),
  })
  .describe("List a patient's results for one lab code, newest first (at most 200).");

const medicationRequestSearch = py
  .ignoreModel({
    category: nullableStr().describe("Inpatient, Outpatient, Community or Discharge (null for all)."),
    date: nullableStr().describe("FHIR date filter on the administration period (null for all)."),
    patient: str().describe("The patient's MRN."),
  })
  .describe("List a patient's medication orders.");

const quantity = (unit: string) => py.ignoreModel({ value: py.floatField().describe("The number."), unit: str().describe(unit) });
const medicationRequestCreate = py
  .ignoreModel({
    resourceType: str().describe('"MedicationRequest".'),
    medicationCodeableConcept: py.ignoreModel({ coding: py.listField(coding()), text: str().describe("The medication's display name.") }),
    authoredOn: str().describe("When the order is written (ISO date-time)."),
    dosageInstruction: py.listField(
      py.ignoreModel({
        route: str().describe("Route, e.g. IV or oral."),
        doseAndRate: py.listField(py.ignoreModel({ doseQuantity: quantity("Dose unit, e.g. g."), rateQuantity: quantity("Rate unit, e.g. h.") })),
      }),
    ),
    status: str().describe('"active" (or a stopping status to discontinue).'),
    intent: str().describe('"order".'),
    subject: subject(),
  })
  .describe("Place a medication order.");

const serviceRequestCreate = py
  .ignoreModel({
    resourceType: str().describe('"ServiceRequest".'),
    code: py.ignoreModel({ coding: py.listField(coding()) }),
    authoredOn: str().describe("When the order is signed (ISO date-time)."),
    status: str().describe('"active".'),
    intent: str().describe('"order".'),
    priority: str().describe('"stat" or "routine".'),
    subject: subject(),
    note: py.ignoreModel({ text: str().describe("Free-text comment, e.g. the indication.") }),
    occurrenceDateTime: str().describe("When the service should happen (ISO date-time)."),
  })
  .describe("Place an order: a referral, lab test, imaging study or procedure.");

const vitalsCreate = py
  .ignoreModel({
    resourceType: str().describe('"Observation".'),
    category: py.listField(py.ignoreModel({ coding: py.listField(coding()).describe("[{system: http://hl7.org/fhir/observation-category, code: vital-signs, display: Vital Signs}]") })),
    code: py.ignoreModel({ text: str().describe("The flowsheet id of what was measured, e.g. BP.") }),
    effectiveDateTime: str().describe("When it was measured (ISO date-time)."),
    status: str().describe('"final".'),
    valueString: str().describe("The measurement, e.g. 118/77 mmHg."),
    subject: subject(),
  })
  .describe("Record a vital sign.");

const procedureSearch = py
  .forbidModel({
    search_params: py.ignoreModel({
      code: nullableStr().optional().describe("CPT or local procedure code(s), comma-separated (null for all)."),
      date: str().describe("FHIR date filter on when it was performed, e.g. ge2022-01-01."),
      patient: str().describe("The patient's MRN."),
    }),
    explanation: str().describe("Why this search is needed."),
  })
  .describe("List a patient's completed procedures, newest first (at most 200).");

const conditionSearch = py
  .forbidModel({
    search_params: py.ignoreModel({
      code: nullableStr().describe("ICD-10 code to filter by (null for all)."),
      patient: str().describe("The patient's MRN."),
    }),
    explanation: str().describe("Why this search is needed."),
  })
  .describe("List a patient's problem list (confirmed conditions).");

const calculator = py
  .ignoreModel({
    expression: str().describe(
      "One single-line Python expression. Available: math (e.g. math.sqrt(2)), datetime (e.g. (datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days), Decimal (e.g. Decimal('1.2') * 3) and sum([...]). No statements, imports or assignments; no other built-ins (abs, round, int are not defined).",
    ),
  })
  .describe("Evaluate one Python expression and return str() of its result.");

const finish = py.ignoreModel({ value: py.scalarListField().describe("The answers, in order.") }).describe("Submit the final answers; this ends the task.");

// The verifiers port (`--v2-semantics medarc`) calls each tool as a Python function of keyword-only
// arguments: an unknown key or a missing required one is a TypeError, keys with a default may be left
// out, and only what its pydantic models validate is type-checked (`explanation` and finish's `value`
// are not: any JSON value passes, and so does any `expression`).
const anyJson = (shownAs: Record<string, unknown>) => z.any().refine((v) => v !== undefined, "Required").meta(shownAs);
const optionalStr = z.string().nullable().optional();
const explanation = anyJson({ type: "string", description: "Why this search is needed." });
const MEDARC_SCHEMAS: Record<string, z.ZodType> = {
  patient_search: z
    .strictObject({
      birthdate: optionalStr.describe("Date of birth, YYYY-MM-DD."),
      family: optionalStr.describe("Family (last) name."),
      given: optionalStr.describe("Given name(s)."),
      identifier: optionalStr.describe("The MRN."),
    })
    .describe(patientSearch.description!),
  fhir_vitals_search: z.strictObject({ ...vitalsSearch.shape, date: optionalStr.describe(vitalsSearch.shape.date.description!) }).describe(vitalsSearch.description!),
  fhir_observation_search: z.strictObject({ search_params: observationSearch.shape.search_params, explanation }).describe(observationSearch.description!),
  fhir_medication_request_search: z
    .strictObject({
      category: optionalStr.describe("Inpatient, Outpatient, Community or Discharge."),
      date: optionalStr.describe("FHIR date filter on the administration period."),
      patient: medicationRequestSearch.shape.patient,
    })
    .describe(medicationRequestSearch.description!),
  fhir_medication_request_create: z.strictObject(medicationRequestCreate.shape).describe(medicationRequestCreate.description!),
  fhir_service_request_create: z.strictObject(serviceRequestCreate.shape).describe(serviceRequestCreate.description!),
  fhir_vitals_create: z.strictObject(vitalsCreate.shape).describe(vitalsCreate.description!),
  fhir_procedure_search: z
    .strictObject({
      search_params: z.looseObject({
        code: optionalStr.describe("CPT or local procedure code(s), comma-separated."),
        date: optionalStr.describe("FHIR date filter on when it was performed, e.g. ge2022-01-01."),
        patient: str().describe("The patient's MRN."),
      }),
      explanation,
    })
    .describe(procedureSearch.description!),
  fhir_condition_search: z
    .strictObject({
      search_params: z.looseObject({ code: optionalStr.describe("ICD-10 code to filter by."), patient: str().describe("The patient's MRN.") }),
      explanation,
    })
    .describe(conditionSearch.description!),
  calculator: z.strictObject({ expression: anyJson({ type: "string", description: calculator.shape.expression.description }) }).describe(calculator.description!),
  finish: z.strictObject({ value: anyJson({ type: "array", items: {}, description: "The answers, in order." }) }).describe(finish.description!),
};

/** What a search sends: [name, value] query parameters from the validated arguments (None values dropped). */
type Params = (a: Record<string, unknown>) => [string, unknown][];
type Search = { kind: "search"; type: string; schema: z.ZodType; params: Params; extra: [string, string][] };
type Create = { kind: "create"; type: string; schema: z.ZodType };
type Other = { kind: "finish" | "calculator"; schema: z.ZodType };
export type ToolSpec = Search | Create | Other;

const pick = (from: (a: Record<string, unknown>) => Record<string, unknown>, ...keys: string[]): Params => (a) => keys.map((k) => [k, from(a)[k]]);
const flat = (a: Record<string, unknown>) => a;
const nested = (a: Record<string, unknown>) => a.search_params as Record<string, unknown>;
// What each original search adds to the arguments (its `_format=json` changes nothing here).
const SORTED_200: [string, string][] = [["_sort", "-date"], ["_count", "200"]];
const COUNT_200: [string, string][] = [["_count", "200"]];

/** The original V2 tools by name, in the original's order. */
export const TOOLS: Record<string, ToolSpec> = {
  patient_search: { kind: "search", type: "Patient", schema: patientSearch, params: pick(flat, "birthdate", "family", "given", "identifier"), extra: [] },
  fhir_vitals_search: { kind: "search", type: "Observation", schema: vitalsSearch, params: pick(flat, "category", "date", "patient"), extra: [] },
  fhir_observation_search: { kind: "search", type: "Observation", schema: observationSearch, params: pick(nested, "code", "patient"), extra: SORTED_200 },
  fhir_medication_request_search: { kind: "search", type: "MedicationRequest", schema: medicationRequestSearch, params: pick(flat, "category", "date", "patient"), extra: COUNT_200 },
  fhir_medication_request_create: { kind: "create", type: "MedicationRequest", schema: medicationRequestCreate },
  fhir_service_request_create: { kind: "create", type: "ServiceRequest", schema: serviceRequestCreate },
  fhir_vitals_create: { kind: "create", type: "Observation", schema: vitalsCreate },
  fhir_procedure_search: { kind: "search", type: "Procedure", schema: procedureSearch, params: pick(nested, "code", "date", "patient"), extra: SORTED_200 },
  fhir_condition_search: { kind: "search", type: "Condition", schema: conditionSearch, params: pick(nested, "code", "patient"), extra: COUNT_200 },
  calculator: { kind: "calculator", schema: calculator },
  finish: { kind: "finish", schema: finish },
};
/** The verifiers port names the patient search `fhir_patient_search`; accepted as an alias. */
export const TOOL_ALIASES: Readonly<Record<string, string>> = { fhir_patient_search: "patient_search" };

/** The original's eleven tools (the default). */
export const DEFAULT_TOOL_NAMES: readonly string[] = Object.keys(TOOLS);
/** The same set under the verifiers port's names (`--v2-semantics medarc`). */
export const MEDARC_TOOL_NAMES: readonly string[] = DEFAULT_TOOL_NAMES.map((n) => (n === "patient_search" ? "fhir_patient_search" : n));

export function toolSpec(name: string, semantics: V2Semantics = "original"): ToolSpec | undefined {
  const canonical = TOOL_ALIASES[name] ?? name;
  const spec = TOOLS[canonical];
  return spec && semantics === "medarc" ? { ...spec, schema: MEDARC_SCHEMAS[canonical]! } : spec;
}

export interface OpenAITool {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

/** The JSON Schema in OpenAI's strict form, as the original's `openai.pydantic_function_tool` offers it:
 *  every object closed (`additionalProperties: false`) and every property listed in `required`. */
function strictSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (!schema || typeof schema !== "object") return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === "properties" ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, strictSchema(s)])) : strictSchema(v)]));
  if (out.type === "object" && out.properties) Object.assign(out, { required: Object.keys(out.properties as object), additionalProperties: false });
  return out;
}

const toolJson = new Map<string, OpenAITool>();
/** The OpenAI `tools` array for the named tools (default: the original's eleven), generated from the zod
 *  schemas; `medarc`: the argument shapes the verifiers port's functions declare. */
export function openAITools(names: readonly string[] = DEFAULT_TOOL_NAMES, semantics: V2Semantics = "original"): OpenAITool[] {
  return names.map((name) => {
    let t = toolJson.get(`${semantics}:${name}`);
    if (!t) {
      const spec = toolSpec(name, semantics);
      if (!spec) throw new Error(`unknown tool ${JSON.stringify(name)}; known: ${[...Object.keys(TOOLS), ...Object.keys(TOOL_ALIASES)].join(", ")}`);
      const { $schema: _s, description, ...parameters } = z.toJSONSchema(spec.schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
      // The port offers its functions' own signatures; the original, strict schemas.
      t =
        semantics === "medarc"
          ? { type: "function", function: { name, description: description as string | undefined, parameters } }
          : { type: "function", function: { name, strict: true, description: description as string | undefined, parameters: strictSchema(parameters) as Record<string, unknown> } };
      toolJson.set(`${semantics}:${name}`, t);
    }
    return t;
  });
}

const ExportedTool = z.union([
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()), strict: z.boolean().optional() }) }),
  // The Responses API form the original's `Tool.json_schema()` gives.
  z.looseObject({ type: z.literal("function"), name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()), strict: z.boolean().optional() }),
]);

/** Reference tool schemas exported from the original (a JSON array, Chat Completions or Responses form),
 *  shown to the model instead of ehrgym's own; every name must be one of the tools. Throws one line naming the problem. */
export function loadToolSchemas(path: string): OpenAITool[] {
  let raw: unknown;
  try {
    raw = JSON.parse(utf8Text(readFileSync(path), path));
  } catch (e) {
    if (e instanceof UserError) throw new Error(`--tool-schemas ${e.message}`); // names file and line
    throw new Error(`--tool-schemas ${path}: ${(e as Error).message}`);
  }
  const parsed = z.array(ExportedTool).min(1).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`--tool-schemas ${path}: [${issue.path.join(".")}] ${issue.message}`);
  }
  // The file's own objects (validated above), so that key order survives: the model sees these bytes.
  return (raw as Record<string, unknown>[]).map((t) => {
    const f = "function" in t && t.function && typeof t.function === "object" ? (t.function as OpenAITool["function"]) : (t as unknown as OpenAITool["function"]);
    if (!toolSpec(f.name)) throw new Error(`--tool-schemas ${path}: unknown tool ${JSON.stringify(f.name)}`);
    const kept = Object.fromEntries(Object.entries(f).filter(([k]) => ["name", "description", "parameters", "strict"].includes(k)));
    return { type: "function", function: kept as OpenAITool["function"] };
  });
}

/** What one tool call means. `FAIL` is a call the original cannot run (unknown name, arguments that are
 *  not JSON or fail validation): its agent loop raises and the run ends with the answer "[]". */
export type ToolCallPlan =
  | { kind: "GET"; tool: string; path: string; args: Record<string, unknown> }
  | { kind: "POST"; tool: string; path: string; args: Record<string, unknown>; body: unknown }
  | { kind: "FINISH"; tool: string; value: py.Py; args: Record<string, unknown> }
  | { kind: "CALC"; tool: string; expression: string; args: Record<string, unknown> }
  | { kind: "FAIL"; tool: string; error: string; args?: unknown; badJson?: boolean };

/** Plans one call against the offered tool names. `args` are the arguments as the model sent them
 *  (json.loads), which is what the original logs. `medarc`: the port's argument rules (arguments that
 *  are not a JSON object are called as no arguments, as its `update_tool_args` does). */
export function planToolCall(name: string, argumentsText: string, offered: readonly string[] = DEFAULT_TOOL_NAMES, semantics: V2Semantics = "original"): ToolCallPlan {
  // json.loads, as both read the arguments (NaN and Infinity included).
  const loaded = py.tryJsonLoads(argumentsText);
  if (!loaded.ok) return { kind: "FAIL", tool: name, error: `arguments of ${name} are not valid JSON: ${loaded.error}`, badJson: true };
  let raw = py.toJs(loaded.value, { intsAsNumbers: true });
  if (semantics === "medarc" && (raw === null || typeof raw !== "object" || Array.isArray(raw))) raw = {};
  const spec = offered.includes(name) ? toolSpec(name, semantics) : undefined;
  if (!spec) return { kind: "FAIL", tool: name, error: `unknown tool ${JSON.stringify(name)}; available tools: ${offered.join(", ")}`, args: raw };
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join(".") : "(arguments)";
    return { kind: "FAIL", tool: name, error: `invalid argument ${field} for ${name}: ${issue.message}`, args: raw };
  }
  const args = raw as Record<string, unknown>;
  switch (spec.kind) {
    case "finish": {
      // The Python value, so that str() and json.dumps of it are exact; the original's is the validated list.
      const value = (loaded.value as py.PyDict).map.get("value") ?? null;
      if (semantics === "medarc") return { kind: "FINISH", tool: name, value, args };
      return { kind: "FINISH", tool: name, value: py.scalarUnionItems(value), args };
    }
    case "calculator": {
      const expression = (parsed.data as { expression: unknown }).expression;
      if (typeof expression !== "string") return { kind: "FAIL", tool: name, error: `invalid argument expression for ${name}: expected a string`, args: raw };
      return { kind: "CALC", tool: name, expression, args };
    }
    case "create":
      // The original sends `model_dump(exclude_none=True)`: declared fields only, coerced; the port, what came.
      return { kind: "POST", tool: name, path: spec.type, args, body: excludeNone(semantics === "medarc" ? raw : parsed.data) };
    case "search": {
      const qs: string[] = [];
      for (const [k, v] of [...spec.params(parsed.data as Record<string, unknown>), ...spec.extra]) {
        if (v === undefined || v === null) continue;
        qs.push(`${k}=${encodeURIComponent(String(v))}`);
      }
      return { kind: "GET", tool: name, path: qs.length ? `${spec.type}?${qs.join("&")}` : spec.type, args };
    }
  }
}

/** `exclude_none`: null fields are left out, at every depth. */
function excludeNone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(excludeNone);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, excludeNone(x)]));
  return v;
}

/** The HTTP method and resource type the original's wrapper maps a tool to (`api_mapping`); calculator,
 *  finish and unknown names have none. `medarc`: the verifiers port's table (its patient search name). */
export function apiMapping(name: string, semantics: V2Semantics): { method: "GET" | "POST"; type: string } | undefined {
  const canonical = semantics === "medarc" ? (name === "fhir_patient_search" ? "patient_search" : name === "patient_search" ? undefined : name) : name === "patient_search" ? name : name === "fhir_patient_search" ? undefined : name;
  if (canonical === undefined) return undefined;
  const spec = TOOLS[canonical];
  if (!spec || (spec.kind !== "search" && spec.kind !== "create")) return undefined;
  return { method: spec.kind === "search" ? "GET" : "POST", type: spec.type };
}

