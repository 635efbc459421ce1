// --patients-from / --charts-for: the real 500 patients as the population, charts exactly for
// the MRNs named by the official task files; the others keep demographics only.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contextClock, readChartsFor, readPatientsNdjson } from "../../env/ehr/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { hashGeneration } from "./helpers.ts";

describe("task clocks", () => {
  it("reads the clock of a context like the v2 graders", () => {
    expect(contextClock("The code for heart rate is 'HEARTRATE'. It's 2020-05-12T11:42:00+00:00 now")).toBe("2020-05-12T11:42:00+00:00");
    expect(contextClock("it's 2023-11-16T10:00:00+00:00 now.")).toBe("2023-11-16T10:00:00+00:00");
    expect(contextClock("no clock here")).toBeUndefined();
  });
});

describeShared("population from the real patients", () => {
  const taskFiles = [sharedFile("test_data_v2.json"), sharedFile("new_patient_tasks_v2.json")];
  const expected = new Set<string>();
  for (const f of taskFiles) for (const t of JSON.parse(readFileSync(f, "utf8")) as { eval_MRN?: string }[]) if (t.eval_MRN) expected.add(t.eval_MRN);

  it("loads the patients as-is and charts exactly the task files' MRNs", () => {
    const patients = readPatientsNdjson(sharedFile("patients_real.ndjson"));
    expect(patients).toHaveLength(500);
    const charts = readChartsFor(taskFiles);
    expect(new Set(charts.mrns)).toEqual(expected);
    // The per-patient V2 task3 clocks become anchors.
    expect(Object.keys(charts.anchors).length).toBeGreaterThan(10);
    const realLines = readFileSync(sharedFile("patients_real.ndjson"), "utf8").trim().split("\n");
    const patientTexts: string[] = [];
    const subjects = new Set<string>();
    const { summary } = hashGeneration({ patientsFrom: patients, chartsFor: charts.mrns, anchors: charts.anchors }, (json) => {
      if (json.startsWith('{"resourceType":"Patient"')) patientTexts.push(json);
      else subjects.add(/"reference":"Patient\/([^"]+)"/.exec(json)![1]!);
    });
    expect(patientTexts.map((t) => JSON.parse(t))).toEqual(realLines.map((l) => JSON.parse(l)));
    expect(subjects).toEqual(expected);
    expect(new Set(summary.charted)).toEqual(expected);
    expect(summary.patients).toBe(500);
  });

  it("charts the first 100 patients when no charts-for is given", () => {
    const patients = readPatientsNdjson(sharedFile("patients_real.ndjson")).slice(0, 130);
    const subjects = new Set<string>();
    hashGeneration({ patientsFrom: patients }, (json) => {
      if (!json.startsWith('{"resourceType":"Patient"')) subjects.add(/"reference":"Patient\/([^"]+)"/.exec(json)![1]!);
    });
    expect(subjects).toEqual(new Set(patients.slice(0, 100).map((p) => p.id)));
  });
});
