// Which tool arguments each mode accepts. The original V2 tools validate with pydantic models: the
// `*Args` wrappers of the nested searches forbid unknown keys, the flat `*Params` and create models ignore
// them, and `Optional[str]` without a default is required (null allowed). The verifiers port (`medarc`,
// med-lm-envs `medagentbenchv2/tools.py` + `env.py`) calls Python functions of keyword-only arguments:
// any unknown key is a TypeError, parameters with a default (`str | None = None`) may be left out, its
// pydantic models check only what they hold (`explanation`, finish's `value` and the calculator's
// `expression` are never checked), and arguments that are not a JSON object become no arguments.
import { describe, expect, it } from "vitest";
import { MEDARC_TOOL_NAMES, openAITools, planToolCall, type V2Semantics } from "../../env/protocol/index.ts";

const MRN = "S1000001";
const bp = {
  resourceType: "Observation",
  category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
  code: { text: "BP" },
  effectiveDateTime: "2023-11-13T10:15:00+00:00",
  status: "final",
  valueString: "118/77 mmHg",
  subject: { reference: `Patient/${MRN}` },
};

const accepts = (mode: V2Semantics, name: string, args: unknown) => {
  const offered = mode === "medarc" ? MEDARC_TOOL_NAMES : undefined;
  return planToolCall(name, typeof args === "string" ? args : JSON.stringify(args), offered, mode).kind !== "FAIL";
};

// [what, tool (medarc name), arguments, original accepts, medarc accepts]
const CASES: [string, string, unknown, boolean, boolean][] = [
  ["patient search with only the MRN", "patient_search", { identifier: MRN }, false, true],
  ["patient search with all four (nulls)", "patient_search", { birthdate: null, family: null, given: null, identifier: MRN }, true, true],
  ["patient search with an unknown key", "patient_search", { birthdate: null, family: null, given: null, identifier: MRN, name: "x" }, true, false],
  ["patient search with no arguments", "patient_search", {}, false, true],
  ["patient search with a number for a name", "patient_search", { family: 7 }, false, false],
  ["vitals search without date", "fhir_vitals_search", { category: "vital-signs", patient: MRN }, false, true],
  ["vitals search without category", "fhir_vitals_search", { date: null, patient: MRN }, false, false],
  ["medication search with only the patient", "fhir_medication_request_search", { patient: MRN }, false, true],
  ["procedure search without date", "fhir_procedure_search", { search_params: { patient: MRN }, explanation: "x" }, false, true],
  ["condition search without code", "fhir_condition_search", { search_params: { patient: MRN }, explanation: "x" }, false, true],
  ["observation search, explanation a number", "fhir_observation_search", { search_params: { code: "K", patient: MRN }, explanation: 3 }, false, true],
  ["observation search without explanation", "fhir_observation_search", { search_params: { code: "K", patient: MRN } }, false, false],
  ["observation search, flat", "fhir_observation_search", { code: "K", patient: MRN }, false, false],
  ["observation search, unknown key in search_params", "fhir_observation_search", { search_params: { code: "K", patient: MRN, date: "ge2023" }, explanation: "x" }, true, true],
  ["observation search, unknown top-level key", "fhir_observation_search", { search_params: { code: "K", patient: MRN }, explanation: "x", extra: 1 }, false, false],
  ["vitals create", "fhir_vitals_create", bp, true, true],
  ["vitals create with an unknown top-level key", "fhir_vitals_create", { ...bp, note: "x" }, true, false],
  ["vitals create with an unknown nested key", "fhir_vitals_create", { ...bp, subject: { reference: `Patient/${MRN}`, display: "x" } }, true, true],
  ["vitals create without subject", "fhir_vitals_create", { ...bp, subject: undefined }, false, false],
  ["finish with a list", "finish", { value: [70] }, true, true],
  ["finish with a number", "finish", { value: 70 }, false, true],
  ["finish with null", "finish", { value: null }, false, true],
  ["finish without value", "finish", {}, false, false],
  ["finish with an unknown key", "finish", { value: [70], note: "x" }, true, false],
  ["finish, arguments a JSON list", "finish", [70], false, false],
  ["finish with NaN (json.loads takes it)", "finish", '{"value": [NaN, -Infinity]}', true, true],
  ["finish with single quotes", "finish", "{'value': [70]}", false, false],
  ["calculator", "calculator", { expression: "1 + 2" }, true, true],
  ["calculator, expression a number", "calculator", { expression: 3 }, false, false],
];

describe("tool arguments: the original's rules and the port's (--v2-semantics medarc)", () => {
  it.each(CASES)("%s", (_what, tool, args, original, medarc) => {
    expect(accepts("original", tool, args)).toBe(original);
    expect(accepts("medarc", tool === "patient_search" ? "fhir_patient_search" : tool, args)).toBe(medarc);
  });

  it("medarc: arguments that are not an object are called as none (the patient search then lists everyone)", () => {
    expect(planToolCall("fhir_patient_search", "[1, 2]", MEDARC_TOOL_NAMES, "medarc")).toMatchObject({ kind: "GET", path: "Patient" });
    expect(planToolCall("fhir_procedure_search", JSON.stringify({ search_params: { patient: MRN }, explanation: null }), MEDARC_TOOL_NAMES, "medarc")).toMatchObject({
      kind: "GET",
      path: `Procedure?patient=${MRN}&_sort=-date&_count=200`,
    });
    expect(planToolCall("finish", JSON.stringify({ value: "S1" }), MEDARC_TOOL_NAMES, "medarc")).toMatchObject({ kind: "FINISH", value: "S1" });
  });

  it("medarc shows the port's argument shapes: defaults optional, no unknown keys", () => {
    const params = (name: string) => openAITools(MEDARC_TOOL_NAMES, "medarc").find((t) => t.function.name === name)!.function.parameters as { required?: string[]; additionalProperties?: unknown; properties: Record<string, { required?: string[]; type?: unknown }> };
    expect(params("fhir_patient_search").required ?? []).toEqual([]);
    expect(params("fhir_patient_search").additionalProperties).toBe(false);
    expect(params("fhir_medication_request_search").required).toEqual(["patient"]);
    expect(params("fhir_procedure_search").properties.search_params!.required).toEqual(["patient"]);
    expect(params("fhir_observation_search").required).toEqual(["search_params", "explanation"]);
    expect(params("fhir_observation_search").properties.explanation!.type).toBe("string");
    expect(params("finish").properties.value!.type).toBe("array");
    expect(params("fhir_vitals_create").additionalProperties).toBe(false);
    // The original's: every field required, nullable where Optional.
    const original = openAITools().find((t) => t.function.name === "patient_search")!.function.parameters as { required: string[] };
    expect(original.required).toEqual(["birthdate", "family", "given", "identifier"]);
  });
});
