// Bounded search: whole-store searches scan slice by slice, so ordinary episode steps, /healthz and
// /metadata are answered while several of them are still running, on both servers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStoreBuilder, FhirService, startFhirHttpServer, type FhirHttpServer, type FhirStore } from "../../env/fhir/index.ts";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { API_BASE, medAgentTestBackend, type LookupCase } from "./medagent-backend.ts";

/** Each reads every Observation (about 20,000 here), none through an index. */
const WORST = ["Observation?value-quantity=lt5", "Observation?status:not=final", "Observation?code:not=x&_sort=value-quantity", "Observation?value-quantity=gt1000"];

let reward: RewardServer;
let rewardUrl: string;
let fhir: FhirHttpServer;
let cases: LookupCase[];
let store: FhirStore;

beforeAll(async () => {
  const built = medAgentTestBackend(3);
  cases = built.cases;
  store = built.store;
  reward = createRewardServer({ backend: built.backend });
  rewardUrl = await reward.listen(0);
  fhir = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }) });
});
afterAll(async () => {
  await reward?.close();
  await fhir?.close();
});

async function post(path: string, body: unknown) {
  const res = await fetch(rewardUrl + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

/** Start `work` and record when it settles. */
function track<T>(work: Promise<T>): { done: boolean; result: Promise<T> } {
  const t = { done: false, result: work };
  work.finally(() => (t.done = true)).catch(() => {});
  return t;
}

describe("bounded search", () => {
  it("answers ordinary steps and /healthz on the reward server while worst-case searches run", async () => {
    const slowIds = await Promise.all(WORST.map(async () => (await post("/v1/episodes", { task_id: cases[0]!.task.id })).json.episode_id as string));
    const slow = WORST.map((q, i) => track(post(`/v1/episodes/${slowIds[i]}/step`, { action: `GET ${API_BASE}${q}` })));
    for (let round = 0; round < 3; round++) {
      const c = cases[round % cases.length]!;
      const created = await post("/v1/episodes", { task_id: c.task.id });
      const get = await post(`/v1/episodes/${created.json.episode_id}/step`, { action: c.turns[0] });
      expect(get.status).toBe(200);
      const fin = await post(`/v1/episodes/${created.json.episode_id}/step`, { action: c.turns[1] });
      expect(fin.json).toMatchObject({ reward: 1, terminated: true });
      expect((await fetch(rewardUrl + "/healthz")).status).toBe(200);
    }
    expect(slow.map((s) => s.done)).toEqual(WORST.map(() => false));
    for (const s of slow) {
      const r = await s.result;
      expect(r.status).toBe(200);
      expect(r.json.observation[0].content).toMatch(/^Here is the response from the GET request:\n\{/);
    }
  });

  it("answers /metadata and reads on `fhir serve` while worst-case searches run", async () => {
    const slow = WORST.map((q) => track(fetch(fhir.url + q).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))));
    const patient = store.search("Patient", "_count=1").resources[0]!;
    for (let round = 0; round < 3; round++) {
      expect((await fetch(fhir.url + "metadata")).status).toBe(200);
      const read = await fetch(`${fhir.url}Patient/${patient.id}`);
      expect(((await read.json()) as any).id).toBe(patient.id);
    }
    expect(slow.map((s) => s.done)).toEqual(WORST.map(() => false));
    const all = store.countsByType().Observation!;
    const first = await slow[0]!.result;
    expect(first.status).toBe(200);
    expect(first.body.total).toBeGreaterThan(0);
    expect(first.body.total).toBeLessThan(all);
    for (const s of slow) expect((await s.result).status).toBe(200);
  });

  it("refuses a search that would read more resources than the budget with a too-costly OperationOutcome", async () => {
    const builder = createStoreBuilder({ scanLimit: 50 });
    for (let i = 0; i < 120; i++)
      builder.addResource({ resourceType: "Observation", status: "final", code: { coding: [{ system: "http://loinc.org", code: `c${i % 3}` }] }, valueQuantity: { value: i } });
    const small = builder.build();
    const service = new FhirService(small);
    const refused = service.handleSync({ method: "GET", path: "Observation?value-quantity=lt5" });
    expect(refused.status).toBe(400);
    const issue = JSON.parse(refused.text).issue[0];
    expect(issue.code).toBe("too-costly");
    expect(issue.diagnostics).toContain("more than 50 Observation resources");
    expect(issue.diagnostics).toContain("value-quantity");
    expect(issue.diagnostics).toMatch(/Narrow it with an indexed parameter/);
    const sorted = await service.handle({ method: "GET", path: "Observation?_sort=value-quantity" });
    expect(JSON.parse(sorted.text).issue[0].code).toBe("too-costly");
    // An index narrows the same criterion to within the budget: of the 40 rows with code c0, values 0 and 3 are below 5.
    const narrowed = await service.handle({ method: "GET", path: "Observation?code=c0&value-quantity=lt5" });
    expect(narrowed.status).toBe(200);
    expect(JSON.parse(narrowed.text).total).toBe(2);
    // "|code" and "system|" use the code index too.
    expect(JSON.parse(service.handleSync({ method: "GET", path: "Observation?code=http://loinc.org|" }).text).total).toBe(120);
    expect(JSON.parse(service.handleSync({ method: "GET", path: "Observation?code=|c1" }).text).total).toBe(0);
  });
});
