// A tiny hand-made EHR for exact search assertions: every value is chosen so each test knows its answer.
import { createFhirService, createStoreBuilder, type FhirService, type FhirStore } from "../../env/fhir/index.ts";

const meta = (ms: string) => `"meta":{"versionId":"1","lastUpdated":"2024-12-30T20:00:00.${ms}+00:00","source":"#abcdefghijklmnop"}`;

export const PATIENTS = [
  `{"resourceType":"Patient","id":"S1000001",${meta("001")},"identifier":[{"use":"usual","type":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/v2-0203","code":"MR"}]},"system":"urn:mrn","value":"S1000001"}],"name":[{"use":"official","family":"García","given":["José","Luis"]}],"gender":"male","birthDate":"1950-03-05"}`,
  `{"resourceType":"Patient","id":"S1000002",${meta("002")},"identifier":[{"value":"S1000002"}],"name":[{"family":"Garner","given":["Ann"]}],"gender":"female","birthDate":"1950-03-06"}`,
  `{"resourceType":"Patient","id":"S1000003",${meta("003")},"identifier":[{"system":"urn:mrn","value":"S1000003"}],"name":[{"family":"Smith","given":["Jo"],"text":"Jo Smith"}],"gender":"female","birthDate":"1987-11"}`,
];

function obs(id: number, patient: string, code: string, when: string, value: string, extra = ""): string {
  return `{"resourceType":"Observation","id":"${id}",${meta(String(id % 1000).padStart(3, "0"))},"status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"${code}","display":"${code}"}],"text":"${code}-text"},"subject":{"reference":"Patient/${patient}"},"effectiveDateTime":"${when}","valueQuantity":{"value":${value},"unit":"mmol/L","system":"http://unitsofmeasure.org","code":"mmol/L"}${extra}}`;
}

// Ids ascending in load order, dates deliberately not chronological.
export const OBSERVATIONS = [
  obs(101, "S1000001", "K", "2023-11-12T10:15:00+00:00", "4.0"),
  obs(102, "S1000001", "K", "2021-01-01T00:00:00+00:00", "3.5"),
  obs(103, "S1000001", "A1C", "2023-11-13T23:30:00+00:00", "5.0"),
  obs(104, "S1000002", "K", "2023-11-12T23:59:59+00:00", "5.5"),
  obs(105, "S1000001", "K", "2023-11-13T02:00:00+05:00", "4.2"),
  obs(106, "S1000001", "K", "2022-06-01T12:00:00-04:00", "6.1"),
  obs(107, "S1000003", "GLU", "2023-11-12T00:00:00+00:00", "120", `,"interpretation":[{"coding":[{"code":"H"}]}]`),
];

export const CONDITIONS = [
  `{"resourceType":"Condition","id":"201",${meta("201")},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},"category":[{"coding":[{"code":"problem-list-item"}]}],"code":{"coding":[{"system":"http://snomed.info/sct","code":"38341003"}],"text":"Hypertension"},"subject":{"reference":"Patient/S1000001"},"onsetDateTime":"2015-04-01"}`,
];

export function buildFixtureStore(): FhirStore {
  const b = createStoreBuilder({ maxCount: 50 });
  for (const line of [...PATIENTS, ...OBSERVATIONS, ...CONDITIONS]) b.addText(line);
  return b.build();
}

export function fixtureService(): { store: FhirStore; service: FhirService } {
  const store = buildFixtureStore();
  return { store, service: createFhirService(store, { defaultCount: 3 }) };
}

/** Ids of a search through the store reader. */
export function ids(store: { search(type: string, q: string): { resources: { id?: string }[] } }, type: string, q: string): string[] {
  return store.search(type, q).resources.map((r) => r.id!);
}
