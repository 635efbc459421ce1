// A small deterministic EHR as NDJSON text (Patients + lab Observations + Conditions), shaped like
// the MedAgentBench data: MRN ids, numeric ids for the rest, decimals kept as written ("5.0").
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 as prng } from "../../env/util/index.ts";

export interface FixtureOptions {
  patients: number;
  observationsPerPatient: number;
}

const FAMILIES = ["Robinson", "García", "Nguyen", "Okafor", "Smith", "Müller", "Khan", "Rossi"];
const GIVENS = ["Alyssa", "José", "Mai", "Chidi", "John", "Jürgen", "Aisha", "Luca"];
const CODES = ["A1C", "K", "MG", "GLU"];

export function mrn(i: number): string {
  return `S${String(1000000 + i * 7919).padStart(7, "0")}`;
}

function meta(r: () => number): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let src = "#";
  for (let i = 0; i < 16; i++) src += chars[Math.floor(r() * chars.length)];
  const ms = String(Math.floor(r() * 1000)).padStart(3, "0");
  return `{"versionId":"1","lastUpdated":"2024-12-30T19:05:4${Math.floor(r() * 10)}.${ms}+00:00","source":"${src}"}`;
}

/** NDJSON lines: all Patients first, then Observations and Conditions with ascending numeric ids. */
export function fixtureLines(o: FixtureOptions, seed = 42): string[] {
  const r = prng(seed);
  const lines: string[] = [];
  for (let p = 0; p < o.patients; p++) {
    const id = mrn(p);
    const family = FAMILIES[p % FAMILIES.length]!;
    const given = GIVENS[(p * 3) % GIVENS.length]!;
    const year = 1930 + Math.floor(r() * 70);
    const birth = `${year}-${String(1 + Math.floor(r() * 12)).padStart(2, "0")}-${String(1 + Math.floor(r() * 28)).padStart(2, "0")}`;
    lines.push(
      `{"resourceType":"Patient","id":"${id}","meta":${meta(r)},"identifier":[{"use":"usual","type":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/v2-0203","code":"MR","display":"Medical Record Number"}]},"value":"${id}"}],"name":[{"use":"official","family":"${family}","given":["${given}"]}],"gender":"${p % 2 ? "female" : "male"}","birthDate":"${birth}"}`,
    );
  }
  let next = 1000;
  for (let p = 0; p < o.patients; p++) {
    const id = mrn(p);
    for (let k = 0; k < o.observationsPerPatient; k++) {
      const code = CODES[k % CODES.length]!;
      const day = new Date(Date.UTC(2019, 0, 1) + Math.floor(r() * 5 * 365) * 86_400_000).toISOString().slice(0, 10);
      const value = (3 + r() * 5).toFixed(1);
      lines.push(
        `{"resourceType":"Observation","id":"${next++}","meta":${meta(r)},"status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory","display":"Laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"${code}","display":"${code}"}],"text":"${code}"},"subject":{"reference":"Patient/${id}","identifier":{"system":"http://terminology.hl7.org/CodeSystem/v2-0203","value":"${id}"}},"effectiveDateTime":"${day}T10:${String(k % 60).padStart(2, "0")}:00+00:00","issued":"${day}T12:00:00+00:00","valueQuantity":{"value":${value},"unit":"mmol/L","system":"http://unitsofmeasure.org","code":"mmol/L"}}`,
      );
    }
    lines.push(
      `{"resourceType":"Condition","id":"${next++}","meta":${meta(r)},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},"category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-category","code":"problem-list-item"}]}],"code":{"coding":[{"system":"http://snomed.info/sct","code":"44054006","display":"Diabetes"}],"text":"Diabetes"},"subject":{"reference":"Patient/${id}"},"onsetDateTime":"2015-06-0${1 + (p % 9)}T00:00:00+00:00"}`,
    );
  }
  return lines;
}

/** Write the fixture as one NDJSON file; returns its path. */
export function writeFixture(dir: string, o: FixtureOptions, seed = 42): string {
  const path = join(dir, "fixture.ndjson");
  writeFileSync(path, `${fixtureLines(o, seed).join("\n")}\n`);
  return path;
}
