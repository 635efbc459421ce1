// Small real stores and tasks for env tests.
import { createStoreBuilder, FhirService, loadNdjson, type FhirStore } from "../../env/fhir/index.ts";
import type { GradeInput, GradeResult } from "../../env/graders/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { sharedFile } from "../helpers/shared.ts";

export const API_BASE = "http://localhost:8080/fhir/";

export function patient(mrn: string, family: string, given: string, birthDate: string) {
  return {
    resourceType: "Patient",
    id: mrn,
    identifier: [{ use: "usual", type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "MR" }] }, value: mrn }],
    name: [{ use: "official", family, given: [given] }],
    gender: "female",
    birthDate,
  };
}

export function lab(id: string, mrn: string, code: string, value: number, when: string) {
  return {
    resourceType: "Observation",
    id,
    status: "final",
    category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "laboratory", display: "Laboratory" }] }],
    code: { coding: [{ system: "http://loinc.org", code, display: code }], text: code },
    subject: { reference: `Patient/${mrn}` },
    effectiveDateTime: when,
    valueQuantity: { value, unit: "mmol/L", system: "http://unitsofmeasure.org", code: "mmol/L" },
  };
}

export const MRNS = ["S1000001", "S1000002", "S1000003"];

/** Three patients with a few K labs each. */
export function smallStore(): FhirStore {
  const b = createStoreBuilder();
  b.addResource(patient(MRNS[0]!, "Stafford", "Peter", "1953-11-13"));
  b.addResource(patient(MRNS[1]!, "Lopez", "Ana", "1970-02-01"));
  b.addResource(patient(MRNS[2]!, "Kim", "Joon", "1988-07-30"));
  let id = 100;
  for (const mrn of MRNS) for (let i = 0; i < 3; i++) b.addResource(lab(String(id++), mrn, "K", 3.5 + i / 10, `2023-1${i}-01T08:00:00+00:00`));
  return b.build();
}

export async function sharedStore(): Promise<FhirStore> {
  const b = createStoreBuilder();
  await loadNdjson([sharedFile("patients_real.ndjson"), sharedFile("observations_real_sample.ndjson")], b);
  return b.build();
}

export function service(store: FhirStore, baseUrl = API_BASE): FhirService {
  return new FhirService(store, { baseUrl });
}

export function task(id: string, mrn = MRNS[0]!, sol?: unknown[]): Task {
  return { id, suite: "mab-v1", type: "task1", instruction: `What is the MRN of patient ${mrn}?`, context: "It's 2023-11-13T10:15:00+00:00 now", eval_MRN: mrn, ...(sol ? { sol } : {}) };
}

/** A grader for env tests: the FINISH result must be the JSON of task.sol, and it records what base it saw. */
export function solGrader(seen: GradeInput[] = []) {
  return (input: GradeInput): GradeResult => {
    seen.push(input);
    const ok = input.result !== undefined && input.task.sol !== undefined && input.result === JSON.stringify(input.task.sol);
    return { reward: ok ? 1 : 0, checks: [{ name: "answer", ok, detail: `result ${input.result}` }], partialCredit: ok ? 1 : 0 };
  };
}

export const vitalsPost = (mrn: string, value = "118/77 mmHg") =>
  `POST ${API_BASE}Observation\n` +
  JSON.stringify({
    resourceType: "Observation",
    category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
    code: { text: "BP" },
    effectiveDateTime: "2023-11-13T10:15:00+00:00",
    status: "final",
    valueString: value,
    subject: { reference: `Patient/${mrn}` },
  });
