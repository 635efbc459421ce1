// The expert scores 300/300 on both official task files, on the embedded server loaded with the
// 500 real patients plus charts generated for the task patients.
import { readFileSync } from "node:fs";
import { beforeAll, expect, it } from "vitest";
import { generateStore } from "../../env/ehr/index.ts";
import type { EnvConfig } from "../../env/core/index.ts";
import { loadTaskFile, type Task } from "../../env/tasks/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { blindToExistingOrders, envConfig, explain, offeredTools, play } from "./world.ts";

describeShared("expert on the official task files", () => {
  let config: EnvConfig;
  let v1: Task[];
  let v2: Task[];

  beforeAll(() => {
    v1 = loadTaskFile(sharedFile("test_data_v2.json"));
    v2 = loadTaskFile(sharedFile("new_patient_tasks_v2.json"));
    const patients = readFileSync(sharedFile("patients_real.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const mrns = [...new Set([...v1, ...v2].flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : [])))];
    config = envConfig(generateStore({ patientsFrom: patients, chartsFor: mrns }).store);
  });

  it("loads 300 tasks of each suite", () => {
    expect(v1.length).toBe(300);
    expect(v1.every((t) => t.suite === "mab-v1")).toBe(true);
    expect(v2.length).toBe(300);
    expect(v2.every((t) => t.suite === "mab-v2")).toBe(true);
  });

  for (const protocol of ["text", "tools"] as const) {
    it(`test_data_v2.json: 300/300 (${protocol})`, async () => {
      const rows = await play(config, v1, protocol);
      const passed = rows.filter((r) => r.reward === 1).length;
      expect(passed, explain(rows)).toBe(300);
    });
  }

  it("new_patient_tasks_v2.json: 300/300 (text)", async () => {
    const rows = await play(config, v2, "text");
    expect(rows.filter((r) => r.reward === 1).length, explain(rows)).toBe(300);
  });

  it("new_patient_tasks_v2.json (tools): 300/300 when a ServiceRequest search tool is offered, else only catheter tasks with an existing removal order fail", async () => {
    const rows = await play(config, v2, "tools");
    const tools = await offeredTools(config, v2[0]!);
    const failed = rows.filter((r) => r.reward !== 1);
    expect(failed.filter((r) => !blindToExistingOrders(r, tools)), explain(rows)).toEqual([]);
    expect(rows.length - failed.length).toBeGreaterThanOrEqual(290);
  });
});
