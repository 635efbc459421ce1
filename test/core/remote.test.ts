import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MedAgentEnv, readJournal, RemoteBackend } from "../../env/core/index.ts";
import { FhirService, RemoteFhir, startFhirHttpServer, type FhirHttpServer } from "../../env/fhir/index.ts";
import type { GradeInput } from "../../env/graders/index.ts";
import { POST_ACCEPTED } from "../../env/protocol/index.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";
import { lab, MRNS, patient, smallStore, solGrader, task } from "./fixtures.ts";

const vitals = (mrn: string, v = "1") => ({
  resourceType: "Observation",
  status: "final",
  code: { text: "BP" },
  subject: { reference: `Patient/${mrn}` },
  valueString: v,
  effectiveDateTime: "2023-11-13T10:15:00+00:00",
  category: [{ coding: [{ code: "vital-signs" }] }],
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ehrgym-remote-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function count(fhir: RemoteFhir, mrn: string): Promise<number> {
  return ((await fhir.json(`Observation?patient=${mrn}&_summary=count`)) as { total: number }).total;
}

describe("RemoteBackend against the project's HTTP FHIR server (in-process)", () => {
  const store = smallStore();
  let server: FhirHttpServer;
  let fhir: RemoteFhir;
  beforeAll(async () => {
    server = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }), port: 0, overlay: store.newOverlay() });
    fhir = new RemoteFhir(server.url);
  });
  afterAll(() => server.close());

  it("executes writes on the server during the episode and deletes them at the end; graders never see them", async () => {
    const journal = join(dir, "j1.ndjson");
    const backend = await RemoteBackend.create({ url: server.url, journal });
    expect(backend.replay).toEqual({ deleted: 0, failed: [], unresolvedIntents: 0 });
    const seen: GradeInput[] = [];
    const env = new MedAgentEnv({ backend, grader: solGrader(seen) });
    const base = await count(fhir, MRNS[0]!);
    const reset = await env.reset({ task: task("remote", MRNS[0], [MRNS[0]]) });
    expect(reset.observation[0]!.content).toContain(`Use ${server.url} as the api_base`);
    const get = await env.step(`GET ${server.url}Observation?patient=${MRNS[0]}&code=K`);
    expect(get.observation[0]!.content).toMatch(/^Here is the response from the GET request:\n\{\n  "resourceType": "Bundle"/);
    expect(get.observation[0]!.content).toContain('"total": 3');
    expect((await env.step(`POST ${server.url}Observation\n${JSON.stringify(vitals(MRNS[0]!))}`)).observation[0]!.content).toBe(POST_ACCEPTED);
    expect((await env.step(`POST ${server.url}Observation\n${JSON.stringify(vitals(MRNS[0]!, "2"))}`)).observation[0]!.content).toBe(POST_ACCEPTED);
    expect(await count(fhir, MRNS[0]!)).toBe(base + 2);
    const end = await env.step(`FINISH(["${MRNS[0]}"])`);
    expect(end).toMatchObject({ reward: 1, info: { status: "completed" } });
    // The grader's base is the server's data without the episode's writes.
    expect(seen[0]!.base.search("Observation", `patient=${MRNS[0]}`).total).toBe(base);
    expect(seen[0]!.base.read("Patient", MRNS[0]!)?.id).toBe(MRNS[0]);
    expect(await count(fhir, MRNS[0]!)).toBe(base);
    expect(readJournal(journal)).toEqual({ created: [], unresolvedIntents: 0 });
    const ops = readFileSync(journal, "utf8").trim().split("\n").map((l) => JSON.parse(l).op);
    expect(ops).toEqual(["intent", "created", "intent", "created", "deleted", "deleted"]);
    backend.close();
  });

  it("rolls back after every terminal status", async () => {
    const backend = await RemoteBackend.create({ url: server.url, journal: join(dir, "j2.ndjson") });
    const env = new MedAgentEnv({ backend, grader: solGrader() });
    const base = await count(fhir, MRNS[1]!);
    const post = `POST ${server.url}Observation\n${JSON.stringify(vitals(MRNS[1]!))}`;
    for (const end of ["FINISH([])", "nonsense", "limit", "context_limit", "error"] as const) {
      await env.reset({ task: task("t", MRNS[1]), maxRounds: end === "limit" ? 2 : 8 });
      await env.step(post);
      expect(await count(fhir, MRNS[1]!)).toBe(base + 1);
      if (end === "limit") expect((await env.step(post)).info.status).toBe("limit_reached");
      else if (end === "context_limit" || end === "error") await env.abort(end);
      else await env.step(end);
      expect([end, await count(fhir, MRNS[1]!)]).toEqual([end, base]);
    }
    backend.close();
  });

  it("sends nothing with writes=record", async () => {
    const backend = await RemoteBackend.create({ url: server.url });
    const env = new MedAgentEnv({ backend, grader: solGrader() });
    const base = await count(fhir, MRNS[2]!);
    await env.reset({ task: task("t", MRNS[2]), writes: "record" });
    expect((await env.step(`POST ${server.url}Observation\n${JSON.stringify(vitals(MRNS[2]!))}`)).observation[0]!.content).toBe(POST_ACCEPTED);
    expect(await count(fhir, MRNS[2]!)).toBe(base);
    expect(env.record().actions[0]!.response).toBeUndefined();
  });

  it("ends the episode with status error when the server is unreachable", async () => {
    const dead = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }), port: 0 });
    const url = dead.url;
    await dead.close();
    const backend = await RemoteBackend.create({ url, fhir: { retries: 0, timeoutMs: 600_000 } });
    const env = new MedAgentEnv({ backend, grader: solGrader() });
    await env.reset({ task: task("t") });
    const s = await env.step(`GET ${url}Patient?identifier=${MRNS[0]}`);
    expect(s).toMatchObject({ terminated: true, reward: 0, info: { status: "error" } });
    expect(s.info.error).toMatch(/failed/);
  });
});

describe("RemoteBackend crash recovery (real child processes)", () => {
  let serverProc: ChildProcess;
  let url: string;

  beforeAll(async () => {
    const ndjson = join(dir, "data.ndjson");
    const lines = [patient(MRNS[0]!, "Stafford", "Peter", "1953-11-13"), lab("100", MRNS[0]!, "K", 4.1, "2023-10-01T08:00:00+00:00")];
    writeFileSync(ndjson, lines.map((r) => JSON.stringify(r)).join("\n") + "\n");
    serverProc = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", "fhir", "serve", "--port", "0", "--import", ndjson], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] });
    url = await firstMatch(serverProc, /FHIR server listening at (\S+)/);
  });
  afterAll(() => {
    serverProc.kill("SIGTERM");
  });

  it("a killed episode's writes are deleted when the next process replays the journal", async () => {
    const journal = join(dir, "crash.ndjson");
    const fhir = new RemoteFhir(url);
    const base = await count(fhir, MRNS[0]!);
    const child = spawn(process.execPath, ["--import", "tsx", "test/core/scripts/remote-episode.ts", url, journal, MRNS[0]!, "3"], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] });
    const ids = (await firstMatch(child, /CREATED (\S+)/)).split(",");
    expect(ids).toHaveLength(3);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(await count(fhir, MRNS[0]!)).toBe(base + 3);
    expect(readJournal(journal).created.map((c) => c.id)).toEqual(ids);

    const backend = await RemoteBackend.create({ url, journal });
    expect(backend.replay).toEqual({ deleted: 3, failed: [], unresolvedIntents: 0 });
    expect(await count(fhir, MRNS[0]!)).toBe(base);
    for (const id of ids) expect((await fhir.request({ method: "GET", path: `Observation/${id}` })).status).toBeGreaterThanOrEqual(400);
    expect(readFileSync(journal, "utf8")).toBe("");
    backend.close();
  });
});

function firstMatch(proc: ChildProcess, re: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.on("line", (line) => {
      const m = re.exec(line);
      if (m) {
        rl.close();
        resolve(m[1]!);
      }
    });
    proc.once("exit", (code) => reject(new Error(`process exited (${code}) before printing ${re}`)));
  });
}
