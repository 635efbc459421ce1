// HTTP throughput of the embedded FHIR server on the mixed MedAgentBench workload over loopback,
// against @medplum/fhir-router's MemoryRepository behind the same HTTP layer, in the same run.
// autocannon fires from a worker thread so the server owns the main event loop.
//   npm run bench -- fhir-http           (FHIR_HTTP_SECONDS=5 FHIR_HTTP_RUNS=3 FHIR_HTTP_CONNECTIONS=16)
import autocannon from "autocannon";
import {
  FhirService,
  createStoreBuilder,
  startFhirHttpServer,
  type FhirHandler,
  type FhirRequest,
  type FhirResource,
  type FhirStore,
} from "../../env/fhir/index.ts";
import { MedplumPeer } from "./peers/medplum.ts";
import { median, report } from "./report.ts";

const SECONDS = Number(process.env.FHIR_HTTP_SECONDS ?? 5);
const RUNS = Number(process.env.FHIR_HTTP_RUNS ?? 3);
const CONNECTIONS = Number(process.env.FHIR_HTTP_CONNECTIONS ?? 16);
/** Patients given to the medplum peer: its MemoryRepository scans every resource per search
 *  (seconds per query on one synthetic patient's ~6k resources), so it gets a small subset. */
const PEER_PATIENTS = Number(process.env.FHIR_HTTP_PEER_PATIENTS ?? 1);
/** The peer comparison runs with one connection: a slow async handler would otherwise keep
 *  burning CPU on queued requests long after the measurement ends. */
const PEER_SECONDS = Number(process.env.FHIR_HTTP_PEER_SECONDS ?? 15);
const TARGET = 8000;

interface Measured {
  rps: number;
  errors: number;
  non2xx: number;
}

/** The default synthetic population when the generator exists, else a quick lab-only filler. */
async function benchStore(): Promise<{ store: FhirStore; source: string }> {
  try {
    const ehr = (await import("../../env/ehr/index.ts")) as { generateStore?: (o: { seed?: number; patients?: number }) => FhirStore };
    if (typeof ehr.generateStore === "function") {
      const patients = process.env.FHIR_HTTP_PATIENTS ? Number(process.env.FHIR_HTTP_PATIENTS) : undefined;
      return { store: ehr.generateStore({ seed: 1, patients }), source: patients ? `synthetic, ${patients} patients` : "synthetic default population" };
    }
  } catch {
    /* generator not there yet */
  }
  return { store: fillerStore(100, 400), source: "filler: 100 patients x 400 labs" };
}

function fillerStore(patients: number, labsPerPatient: number): FhirStore {
  const b = createStoreBuilder();
  const codes = ["A1C", "K", "MG", "GLU", "NA", "CREAT"];
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const ids: string[] = [];
  for (let p = 0; p < patients; p++) {
    const id = `S${1000000 + p * 4049}`;
    ids.push(id);
    b.addText(
      `{"resourceType":"Patient","id":"${id}","identifier":[{"use":"usual","type":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/v2-0203","code":"MR"}]},"value":"${id}"}],"name":[{"use":"official","family":"Fam${p}","given":["Giv${p}"]}],"gender":"${p % 2 ? "female" : "male"}","birthDate":"19${40 + (p % 50)}-0${1 + (p % 9)}-1${p % 10}"}`,
    );
  }
  let next = 100;
  for (let i = 0; i < patients * labsPerPatient; i++) {
    const pid = ids[Math.floor(rnd() * patients)]!;
    const code = codes[i % codes.length]!;
    const day = new Date(Date.UTC(2018, 0, 1) + Math.floor(rnd() * 6 * 365) * 86_400_000).toISOString().slice(0, 10);
    b.addText(
      `{"resourceType":"Observation","id":"${next++}","status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"${code}","display":"${code}"}],"text":"${code}"},"subject":{"reference":"Patient/${pid}"},"effectiveDateTime":"${day}T10:00:00+00:00","valueQuantity":{"value":${(3 + rnd() * 5).toFixed(1)},"unit":"mmol/L"}}`,
    );
  }
  return b.build();
}

/** The query mix MedAgentBench agents issue, built from the store's own patients and codes. */
export function workload(store: FhirStore, patientIds: string[], size = 2000): FhirRequest[] {
  const out: FhirRequest[] = [];
  const pats = patientIds.map((id) => store.read("Patient", id)!).filter(Boolean);
  // The lab codes MedAgentBench tasks ask about (magnesium, glucose, potassium, HbA1c).
  const TASK_CODES = ["MG", "GLU", "K", "A1C"];
  const codesOf = new Map<string, string[]>();
  for (const p of pats) {
    const codes = new Set<string>();
    for (const o of store.byPatient("Observation", p.id!)) {
      const c = (o.code as { coding?: { code?: string }[] } | undefined)?.coding?.[0]?.code;
      if (c && TASK_CODES.includes(c)) codes.add(c);
      if (codes.size === TASK_CODES.length) break;
    }
    codesOf.set(p.id!, [...codes]);
  }
  for (let i = 0; out.length < size; i++) {
    const p = pats[i % pats.length]!;
    const codes = codesOf.get(p.id!) ?? [];
    const code = codes.length ? codes[i % codes.length]! : "A1C";
    const name = (p.name as { family?: string; given?: string[] }[] | undefined)?.[0];
    const slot = i % 20;
    const get = (path: string): FhirRequest => ({ method: "GET", path });
    if (slot < 7) out.push(get(`Observation?code=${encodeURIComponent(code)}&patient=${p.id}&_format=json`));
    else if (slot < 9) out.push(get(`Observation?code=${encodeURIComponent(code)}&patient=${p.id}&date=ge2022-01-01&_format=json`));
    else if (slot < 11) out.push(get(`Observation?code=${encodeURIComponent(code)}&patient=${p.id}&_sort=-date&_count=1&_format=json`));
    else if (slot < 13 && name?.family) out.push(get(`Patient?family=${encodeURIComponent(name.family)}&birthdate=${String(p.birthDate)}&_format=json`));
    else if (slot < 15) out.push(get(`Patient?identifier=${p.id}&_format=json`));
    else if (slot < 17) out.push(get(`Patient/${p.id}`));
    else if (slot === 17) out.push(get(`Condition?patient=${p.id}&_format=json`));
    else if (slot === 18) out.push(get(`MedicationRequest?patient=${p.id}&_format=json`));
    else
      out.push({
        method: "POST",
        path: "Observation",
        body: JSON.stringify({
          resourceType: "Observation",
          status: "final",
          category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
          code: { text: "BP" },
          effectiveDateTime: "2023-11-13T10:15:00+00:00",
          valueString: "118/77 mmHg",
          subject: { reference: `Patient/${p.id}` },
        }),
      });
  }
  return out;
}

/** H1's shared medplum peer (scripts/bench/peers/medplum.ts), loaded with ids kept, behind our HTTP layer. */
async function medplumHandler(resources: FhirResource[], baseUrl: string): Promise<FhirHandler> {
  const peer = new MedplumPeer(baseUrl);
  await peer.load(resources);
  return peer;
}

interface Load {
  connections: number;
  seconds: number;
  runs: number;
  warmup: boolean;
}

const MAIN_LOAD: Load = { connections: CONNECTIONS, seconds: SECONDS, runs: RUNS, warmup: true };
const PEER_LOAD: Load = { connections: 1, seconds: PEER_SECONDS, runs: 1, warmup: false };

async function measure(
  handler: (baseUrl: string) => FhirHandler | Promise<FhirHandler>,
  overlay: FhirStore | undefined,
  requests: FhirRequest[],
  load: Load = MAIN_LOAD,
): Promise<Measured[]> {
  // One fresh server (and so a fresh write overlay) per pass: the workload's POSTs pile up in the
  // server's overlay, and a long-lived one would measure a server that took thousands of writes.
  const pass = async (seconds: number): Promise<Measured> => {
    const server = await startFhirHttpServer({ service: handler, overlay: overlay?.newOverlay() });
    try {
      const base = new URL(server.url).pathname;
      const acRequests = requests.map((r) => ({
        method: r.method,
        path: base + r.path,
        ...(r.body !== undefined ? { body: r.body, headers: { "content-type": "application/fhir+json" } } : {}),
      }));
      const r = await autocannon({ url: server.url, connections: load.connections, duration: seconds, requests: acRequests, workers: 1, timeout: 120 });
      return { rps: r.requests.total / seconds, errors: r.errors + r.timeouts, non2xx: r.non2xx };
    } finally {
      await server.close();
    }
  };
  if (load.warmup) await pass(1); // JIT, first-use rendering caches
  const runs: Measured[] = [];
  for (let i = 0; i < load.runs; i++) runs.push(await pass(load.seconds));
  return runs;
}

export async function run(): Promise<void> {
  const t0 = performance.now();
  const { store, source } = await benchStore();
  process.stderr.write(`fhir-http: ${store.size.toLocaleString("en-US")} resources (${source}) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  const patientIds = store.search("Patient", "_count=5000").resources.map((p) => p.id!);
  const requests = workload(store, patientIds);

  const ours = await measure((baseUrl) => new FhirService(store, { baseUrl }), store, requests);
  const oursRps = median(ours.map((r) => r.rps));
  const oursBad = ours.reduce((n, r) => n + r.errors + r.non2xx, 0);

  let peerBad = 0;
  let peer: { name: string; value: number; ratio: number; note?: string } | undefined;
  try {
    const peerIds = patientIds.slice(0, PEER_PATIENTS);
    const peerRequests = workload(store, peerIds);
    const resources: FhirResource[] = [];
    for (const id of peerIds) {
      resources.push(store.read("Patient", id)!);
      for (const t of ["Observation", "Condition", "MedicationRequest", "Procedure", "ServiceRequest"]) resources.push(...store.byPatient(t, id));
    }
    // Same subset for both servers so the ratio compares like with like.
    const oursSubset = await measure((baseUrl) => new FhirService(store, { baseUrl }), store, peerRequests, PEER_LOAD);
    const theirs = await measure((baseUrl) => medplumHandler(resources, baseUrl), undefined, peerRequests, PEER_LOAD);
    const theirsRps = median(theirs.map((r) => r.rps));
    peerBad = theirs.reduce((n, r) => n + r.errors + r.non2xx, 0);
    const subsetRps = median(oursSubset.map((r) => r.rps));
    peer = {
      name: "medplum MemoryRepository",
      value: theirsRps,
      // No reply at all within the window: bound the ratio with one reply per window.
      ratio: subsetRps / Math.max(theirsRps, 1 / PEER_SECONDS),
      note: `${theirsRps === 0 ? "ratio is a lower bound: no medplum reply completed; " : ""}both: 1 connection, ${PEER_SECONDS} s, the queries of ${peerIds.length} patient(s); medplum holds only their ${resources.length.toLocaleString("en-US")} resources, ehrgym the full store; ehrgym there ${Math.round(subsetRps).toLocaleString("en-US")} req/s`,
    };
  } catch (err) {
    process.stderr.write(`fhir-http: medplum peer unavailable: ${(err as Error).message}\n`);
  }

  report({
    name: `fhir-http mixed workload, loopback, ${CONNECTIONS} connections (median of ${RUNS} x ${SECONDS} s, ${source})`,
    value: oursRps,
    unit: "req/s",
    target: `>= ${TARGET.toLocaleString("en-US")} req/s`,
    ok: oursRps >= TARGET && oursBad === 0,
    peer,
  });
  if (peer) console.log(`fhir-http: peer non-2xx/errors: ${peerBad}`);
  if (oursBad) console.log(`fhir-http: ${oursBad} errors or non-2xx replies during the run`);
}
