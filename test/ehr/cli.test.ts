// `ehrgym ehr generate|stats` as a real child process: output, determinism, bad input -> exit 2
// with nothing half-written.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactJson, createStoreBuilder, loadNdjson, type FhirStore } from "../../env/fhir/index.ts";
import type { BaseStore } from "../../env/fhir/store.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { encoding: "utf8", cwd: PROJECT_ROOT, maxBuffer: 64 << 20 });

let dir: string;
const dirHash = (d: string) => {
  const h = createHash("sha256");
  for (const f of readdirSync(d).sort()) h.update(f).update(readFileSync(join(d, f)));
  return h.digest("hex");
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ehrgym-ehr-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ehrgym ehr generate / stats", () => {
  it("writes per-type NDJSON, byte-identical for the same seed, and describes it", () => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    const r1 = cli("ehr", "generate", "--out", a, "--patients", "4", "--seed", "5");
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(/ehr: charts 4\/4/);
    expect(r1.stderr).toMatch(/index sidecars: \d+\.\d s after the generator/);
    const types = ["Condition", "MedicationRequest", "Observation", "Patient", "Procedure", "ServiceRequest"];
    expect(readdirSync(a).sort()).toEqual(types.flatMap((t) => [`${t}.ndjson`, `${t}.ndjson.idx`]).sort());
    expect(readFileSync(join(a, "Patient.ndjson"), "utf8").trim().split("\n")).toHaveLength(4);
    const r2 = cli("ehr", "generate", "--out", b, "--patients", "4", "--seed", "5", "--no-progress");
    expect(r2.status, r2.stderr).toBe(0);
    expect(dirHash(b)).toBe(dirHash(a));
    // Regenerating into a previous export replaces it.
    const r3 = cli("ehr", "generate", "--out", b, "--patients", "4", "--seed", "6", "--no-progress");
    expect(r3.status, r3.stderr).toBe(0);
    expect(dirHash(b)).not.toBe(dirHash(a));

    const s = cli("ehr", "stats", "--data", a, "--json");
    expect(s.status, s.stderr).toBe(0);
    const stats = JSON.parse(s.stdout) as { resources: number; byType: Record<string, number>; charted: number; coverage: Record<string, Record<string, Record<string, number>>>; byCode: Record<string, Record<string, number>> };
    expect(stats.charted).toBe(4);
    expect(stats.byType.Patient).toBe(4);
    expect(stats.byCode.Observation!.MG).toBeGreaterThan(0);
    expect(Object.values(stats.coverage["mab-v2"]!.task3!).reduce((x, y) => x + y, 0)).toBe(4);
    const text = cli("ehr", "stats", "--data", a);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/branch coverage over 4 charted patients/);
    expect(text.stdout).toMatch(/mab-v2 task10/);
  });

  const bad: [string, string[], RegExp][] = [
    ["zero patients", ["--patients", "0"], /--patients/],
    ["negative patients", ["--patients", "-3"], /--patients/],
    ["absurd patients", ["--patients", "100001"], /--patients/],
    ["non-numeric patients", ["--patients", "many"], /--patients/],
    ["unknown option", ["--bogus", "1"], /unknown option/],
    ["missing patients file", ["--patients-from", "/no/such/file.ndjson"], /--patients-from/],
  ];
  for (const [name, args, message] of bad) {
    it(`rejects ${name} with exit 2 and writes nothing`, () => {
      const out = join(dir, `bad-${name.replace(/\W+/g, "-")}`);
      const r = cli("ehr", "generate", "--out", out, ...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
    });
  }

  it("leaves index sidecars that reload the export exactly as parsing it does", async () => {
    const out = join(dir, "indexed");
    const r = cli("ehr", "generate", "--out", out, "--patients", "2", "--seed", "9", "--no-progress");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/no index sidecar/);
    const files = readdirSync(out).filter((f) => f.endsWith(".ndjson")).map((f) => join(out, f));
    expect(files).toHaveLength(6);
    for (const f of files) expect(existsSync(`${f}.idx`), f).toBe(true);
    const load = async (useIndex: boolean) => {
      const warnings: string[] = [];
      const b = createStoreBuilder();
      await loadNdjson(files, b, { useIndex, onWarning: (m) => warnings.push(m) });
      return { store: b.build() as FhirStore & BaseStore, warnings };
    };
    const viaIndex = await load(true);
    const parsed = await load(false);
    expect(viaIndex.warnings).toEqual([]);
    expect(viaIndex.store.countsByType()).toEqual(parsed.store.countsByType());
    for (const type of parsed.store.types()) {
      const a = parsed.store.table(type)!;
      const b = viaIndex.store.table(type)!;
      expect(b.fromFile, type).toBe(true);
      expect(b.ids, type).toEqual(a.ids);
      for (let row = 0; row < a.size; row++) if (b.text(row) !== a.text(row)) expect(`${type} row ${row}: ${b.text(row)}`).toBe(`${type} row ${row}: ${compactJson(a.text(row))}`);
    }
    const patient = parsed.store.search("Patient", "_count=1").resources[0]!.id!;
    for (const q of [`patient=${patient}&_sort=-date&_count=50`, `patient=${patient}&category=vital-signs&date=ge2020-01-01`, "code=K&_count=100"]) {
      expect(viaIndex.store.search("Observation", q), q).toEqual(parsed.store.search("Observation", q));
    }
  });

  it("reports the line number of a malformed --patients-from line", () => {
    const file = join(dir, "patients.ndjson");
    writeFileSync(file, `${JSON.stringify({ resourceType: "Patient", id: "S1234567" })}\n{"resourceType":"Patient",\n`);
    const r = cli("ehr", "generate", "--out", join(dir, "bad-json"), "--patients-from", file);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/patients\.ndjson:2: not JSON/);
    writeFileSync(file, `${JSON.stringify({ resourceType: "Observation", id: "1" })}\n`);
    const r2 = cli("ehr", "generate", "--out", join(dir, "bad-type"), "--patients-from", file);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/patients\.ndjson:1: not a Patient/);
  });

  it("charts the MRNs of an MRN list and rejects unknown ones", () => {
    const pats = join(dir, "two.ndjson");
    writeFileSync(pats, ["S1111111", "S2222222", "S3333333"].map((id) => JSON.stringify({ resourceType: "Patient", id, gender: "female", birthDate: "1950-02-03" })).join("\n"));
    const list = join(dir, "mrns.txt");
    writeFileSync(list, "# who gets a chart\nS2222222\n");
    const out = join(dir, "list");
    const r = cli("ehr", "generate", "--out", out, "--patients-from", pats, "--charts-for", list, "--no-progress");
    expect(r.status, r.stderr).toBe(0);
    const obs = readFileSync(join(out, "Observation.ndjson"), "utf8");
    expect(obs).toContain("Patient/S2222222");
    expect(obs).not.toContain("Patient/S1111111");
    writeFileSync(list, "S9999999\n");
    const r2 = cli("ehr", "generate", "--out", join(dir, "unknown"), "--patients-from", pats, "--charts-for", list);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/S9999999/);
    expect(existsSync(join(dir, "unknown"))).toBe(false);
  });

  it("refuses an output directory that holds other files", () => {
    const out = join(dir, "occupied");
    mkdirSync(out);
    writeFileSync(join(out, "notes.txt"), "keep me");
    const r = cli("ehr", "generate", "--out", out, "--patients", "2");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--out: .* not empty/);
    expect(readdirSync(out)).toEqual(["notes.txt"]);
  });

  it("rejects stats of a missing directory with exit 2", () => {
    const r = cli("ehr", "stats", "--data", join(dir, "nope"));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--data: no such directory/);
  });
});
