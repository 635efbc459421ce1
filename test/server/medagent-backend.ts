// The real stack for end-to-end server tests: a small synthetic EHR, the FHIR service, MedAgentEnv.
// Tasks are MRN lookups (mab-v1 task1, gold answer in `sol`) built from the generated patients, so
// the expected turns and rewards follow from the data.
import { EmbeddedBackend, EnvConfig } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { createFhirService, type FhirResource, type FhirStore } from "../../env/fhir/index.ts";
import { medAgentBackend, type ServerBackend } from "../../env/server/index.ts";
import type { Task } from "../../env/tasks/index.ts";

export const API_BASE = "http://localhost:8080/fhir/";

export interface LookupCase {
  task: Task;
  /** Text protocol turns that find the patient and finish with the right MRN. */
  turns: string[];
  /** The same in the tool protocol. */
  toolTurns: unknown[];
}

function lookupCase(patient: FhirResource, index: number): LookupCase {
  const name = (patient.name as Array<{ family: string; given: string[] }>)[0]!;
  const birthDate = patient.birthDate as string;
  const mrn = (patient.identifier as Array<{ value: string }>)[0]!.value;
  const task: Task = {
    id: `task1_srv${index + 1}`,
    suite: "mab-v1",
    type: "task1",
    instruction: `What's the MRN of the patient with name ${name.given[0]} ${name.family} and DOB of ${birthDate}? If the patient does not exist, the answer should be "Patient not found"`,
    context: "",
    sol: [mrn],
  };
  const search = `${API_BASE}Patient?family=${encodeURIComponent(name.family)}&given=${encodeURIComponent(name.given[0]!)}&birthdate=${birthDate}`;
  return {
    task,
    turns: [`GET ${search}`, `FINISH(["${mrn}"])`],
    toolTurns: [
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "patient_search", arguments: JSON.stringify({ birthdate: birthDate, family: name.family, given: name.given[0], identifier: null }) } },
        ],
      },
      { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "finish", arguments: JSON.stringify({ value: [mrn] }) } }] },
    ],
  };
}

export function medAgentTestBackend(patients = 3): { backend: ServerBackend; cases: LookupCase[]; store: FhirStore } {
  const { store } = generateStore({ patients, seed: 3 });
  const cases = store.search("Patient", `_count=${patients}`).resources.map(lookupCase);
  const service = createFhirService(store, { baseUrl: API_BASE });
  const tasks = cases.map((c) => c.task);
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, service, API_BASE), tasks });
  return { backend: medAgentBackend(config, tasks), cases, store };
}
