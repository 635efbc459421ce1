// Index sidecars (<Type>.ndjson.idx): a store loaded through them must answer exactly like one
// loaded by parsing, and any sidecar that does not describe its file must be refused.
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateStore } from "../../env/ehr/index.ts";
import { NdjsonIndexStream, compactJson, createFhirService, createStoreBuilder, exportNdjson, loadNdjson, writeNdjsonIndex, type FhirStore, type FhirStoreBuilder } from "../../env/fhir/index.ts";
import { BaseStore } from "../../env/fhir/store.ts";
import { OBSERVATIONS, PATIENTS } from "./fixture.ts";

let root: string;
let exported: string; // an export of the generated population plus hand-made edge cases
let files: string[];
let parsed: FhirStore;
let indexed: FhirStore;
let warnings: string[];

const EXTRA = [
  // accents and case for string search, a non-numeric id table
  ...PATIENTS,
  // open period (maxSpan Infinity), numeric ids with another spelling of the same number
  `{"resourceType":"Observation","id":"99999","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"OPEN"}]},"subject":{"reference":"Patient/S1000001"},"effectivePeriod":{"start":"2020-02-03"}}`,
  `{"resourceType":"Observation","id":"099999","status":"final","code":{"coding":[{"code":"OPEN"}]},"subject":{"reference":"Patient/S1000001"},"effectiveDateTime":"2021-05","valueString":"Très Bien"}`,
  // several date ranges on one row (DateColumn.extra)
  `{"resourceType":"MedicationRequest","id":"88888","status":"active","intent":"order","medicationCodeableConcept":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"X1"}]},"subject":{"reference":"Patient/S1000002"},"authoredOn":"2023-01-01","dosageInstruction":[{"timing":{"event":["2023-01-02","2023-03-04T10:00:00Z"]}},{"timing":{"event":["2022-12-31"]}}]}`,
  // the hand-made lab values, with ids beyond the generated ones
  ...OBSERVATIONS.map((o) => o.replace(/"id":"(\d+)"/, (_, d: string) => `"id":"${Number(d) + 1_000_000}"`)),
];

const tmp = (name: string) => {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
};
const ndjsonFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".ndjson")).sort().map((f) => join(dir, f));

async function load(paths: string[], useIndex: boolean, builder: FhirStoreBuilder = createStoreBuilder({ maxCount: 500 })): Promise<{ store: FhirStore; warnings: string[] }> {
  const w: string[] = [];
  await loadNdjson(paths, builder, { useIndex, onWarning: (m) => w.push(m) });
  return { store: builder.build(), warnings: w };
}

/** Every resource of the store: type, id and compact text in row order (rows served so far are pretty). */
function contents(store: FhirStore): string[] {
  const base = store as BaseStore;
  const out: string[] = [];
  for (const type of base.types().sort()) {
    const t = base.table(type)!;
    for (let row = 0; row < t.size; row++) out.push(`${type}/${t.ids[row]} ${compactJson(t.text(row))}`);
  }
  return out;
}

/** The first difference of two content lists (short messages instead of a diff of every resource). */
function sameContents(actual: string[], expected: string[], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  const i = actual.findIndex((line, k) => line !== expected[k]);
  expect(i === -1 ? "" : `row ${i}: ${actual[i]!.slice(0, 300)}`, what).toBe(i === -1 ? "" : `row ${i}: ${expected[i]!.slice(0, 300)}`);
}

/** Reply text with the per-request parts (Bundle id, its lastUpdated, page ids) blanked. */
function stable(text: string): string {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UUID").replace(/^(\{\s*"resourceType"\s*:\s*"Bundle".*?"lastUpdated"\s*:\s*)"[^"]*"/s, '$1"NOW"');
}

/** The requests an agent makes, from the data itself (per patient: codes, days, names). */
function queries(store: FhirStore): string[] {
  const qs: string[] = ["Observation?code=OPEN", "Observation?code=http://loinc.org|OPEN", "Observation?code=|OPEN", "Patient?name=garcia", "Patient?name:exact=García", "Patient?family=gar", "Patient?name=jo&_sort=birthdate"];
  qs.push("Observation?value-string=tres", "Observation?value-string:exact=Très Bien", "Observation?interpretation=H", "Observation?_id=99999", "Observation?_id=099999", "Observation/099999", "Observation/99999", "Observation/0", "Observation/abc");
  qs.push("MedicationRequest?date=2023-03-04", "MedicationRequest?date=gt2023-01-01&_sort=-date", "MedicationRequest?date=lt2023-01-01", "MedicationRequest?code=X1", "Observation?date=ge2025-01-01&code=OPEN", "Observation?date=le2019-01-01&code=OPEN");
  qs.push("Observation?patient=S1000001&code=OPEN&date=ge2030-01-01", "Observation?patient=S1000001&date=ge2030-01-01", "Observation?patient=S1000001&date=gt2021-06-01&_sort=-date", "MedicationRequest?patient=S1000002&date=ge2023-03-01");
  qs.push("Observation?_count=3", "Observation?_summary=count", "Condition?_sort=-onset-date&_count=4", "Procedure?_sort=date", "ServiceRequest?_count=100");
  for (const p of store.search("Patient", "_count=100").resources) {
    const id = p.id!;
    const name = (p.name as { family?: string; given?: string[] }[] | undefined)?.[0];
    const ident = (p.identifier as { value?: string }[] | undefined)?.[0]?.value ?? id;
    qs.push(`Patient?identifier=${ident}`, `Patient/${id}`, `Patient?_id=${id}`);
    if (name?.family) qs.push(`Patient?family=${encodeURIComponent(name.family)}&given=${encodeURIComponent(name.given?.[0] ?? "")}&birthdate=${p.birthDate}`, `Patient?name=${encodeURIComponent(name.family.slice(0, 3).toLowerCase())}`);
    const obs = store.byPatient("Observation", id);
    const codes = [...new Set(obs.map((o) => (o.code as { coding?: { code?: string }[] }).coding?.[0]?.code).filter((c): c is string => !!c))].slice(0, 6);
    const days = obs.map((o) => (typeof o.effectiveDateTime === "string" ? o.effectiveDateTime.slice(0, 10) : undefined)).filter((d): d is string => !!d);
    const day = days[Math.floor(days.length / 2)] ?? "2023-01-01";
    const late = days[Math.floor((days.length * 9) / 10)] ?? day;
    for (const code of codes) {
      qs.push(`Observation?patient=${id}&code=${code}`, `Observation?patient=${id}&code=http://loinc.org|${code}`, `Observation?patient=${id}&code=${code}&date=ge${day}`);
      qs.push(`Observation?patient=${id}&code=${code}&date=ge${day}&date=le${late}&_sort=date`, `Observation?patient=${id}&code=${code}&_sort=-date&_count=1`, `Observation?patient=Patient/${id}&code=${code}&date=lt${day}&_count=5`);
    }
    qs.push(`Observation?patient=${id}&category=vital-signs&date=ge${day}T00:00:00Z&date=le${day}T23:59:59Z`, `Observation?subject=Patient/${id}&category=laboratory&_sort=-date&_count=10`);
    qs.push(`Observation?patient=${id}&_count=20&_sort=date`, `Condition?patient=${id}&category=problem-list-item`, `MedicationRequest?patient=${id}`, `Procedure?patient=${id}&_sort=-date`, `ServiceRequest?patient=${id}`);
    for (const o of obs.slice(0, 5)) qs.push(`Observation/${o.id}`);
  }
  return qs;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "ehrgym-ndjson-index-"));
  const b = createStoreBuilder();
  const gen = generateStore({ patients: 3, seed: 7 });
  // Put the generated resources and the edge cases in one store, then export it.
  const first = tmp("gen");
  await exportNdjson(gen, first);
  for (const f of ndjsonFiles(first)) for (const line of readFileSync(f, "utf8").split("\n")) if (line) b.addText(line);
  for (const line of EXTRA) b.addText(line);
  exported = tmp("export");
  files = await exportNdjson(b.build(), exported);
  parsed = (await load(files, false)).store;
  const l = await load(files, true);
  indexed = l.store;
  warnings = l.warnings;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("NDJSON index sidecars", () => {
  it("are written beside every exported file and used by a load", () => {
    expect(readdirSync(exported).sort()).toEqual(files.flatMap((f) => [f.split("/").pop()!, `${f.split("/").pop()}.idx`]).sort());
    expect(warnings).toEqual([]);
    for (const type of (indexed as BaseStore).types()) {
      expect((indexed as BaseStore).table(type)!.fromFile, type).toBe(true);
      expect((parsed as BaseStore).table(type)!.fromFile, type).toBe(false);
    }
  });

  it("load a store that answers byte-identically to one loaded by parsing", () => {
    expect(indexed.size).toBe(parsed.size);
    expect(indexed.countsByType()).toEqual(parsed.countsByType());
    const a = createFhirService(parsed, { defaultCount: 7 });
    const b = createFhirService(indexed, { defaultCount: 7 });
    const qs = queries(parsed);
    expect(qs.length).toBeGreaterThan(100);
    let pages = 0;
    for (const q of qs) {
      let ra = a.handleSync({ method: "GET", path: q });
      let rb = b.handleSync({ method: "GET", path: q });
      expect(stable(rb.text), q).toBe(stable(ra.text));
      expect(rb.status, q).toBe(ra.status);
      // follow the paging links on each side
      for (let page = 0; page < 3; page++) {
        const next = (t: string) => (/"relation": "next",\s*"url": "[^"]*\/fhir\/([^"]*)"/.exec(t) ?? [])[1];
        const na = next(ra.text);
        const nb = next(rb.text);
        expect(nb === undefined, q).toBe(na === undefined);
        if (!na || !nb) break;
        ra = a.handleSync({ method: "GET", path: na });
        rb = b.handleSync({ method: "GET", path: nb });
        expect(stable(rb.text), `${q} page ${page + 2}`).toBe(stable(ra.text));
        pages++;
      }
    }
    expect(pages).toBeGreaterThan(10);
    // every resource by id, compact and pretty
    for (const type of (parsed as BaseStore).types()) {
      const t = (parsed as BaseStore).table(type)!;
      for (let row = 0; row < t.size; row++) {
        const path = `${type}/${t.ids[row]}`;
        expect(b.handleSync({ method: "GET", path }).text, path).toBe(a.handleSync({ method: "GET", path }).text);
        if (row % 97 === 0) expect(b.handleSync({ method: "GET", path: `${path}?_pretty=false` }).text, path).toBe(a.handleSync({ method: "GET", path: `${path}?_pretty=false` }).text);
      }
    }
    // the reader API and created ids (beyond the largest numeric id)
    expect(indexed.search("Observation", "code=OPEN").resources).toEqual(parsed.search("Observation", "code=OPEN").resources);
    expect(indexed.byPatient("Observation", "S1000001")).toEqual(parsed.byPatient("Observation", "S1000001"));
    const post = { method: "POST" as const, path: "Observation", body: JSON.stringify({ resourceType: "Observation", status: "final", code: { text: "x" }, subject: { reference: "Patient/S1000001" } }) };
    expect(b.handleSync(post, indexed.newOverlay()).headers.Location).toBe(a.handleSync(post, parsed.newOverlay()).headers.Location);
    sameContents(contents(indexed), contents(parsed), "indexed vs parsed");
  });

  it("give the same export, texts and sidecars byte for byte, whether loaded through them or parsed", async () => {
    const again = tmp("again");
    await exportNdjson(parsed, tmp("from-parsed"));
    await exportNdjson(indexed, again);
    await exportNdjson(parsed, tmp("from-parsed-2"));
    for (const f of readdirSync(exported)) {
      const original = readFileSync(join(exported, f));
      expect(readFileSync(join(root, "from-parsed", f)).equals(original), f).toBe(true);
      expect(readFileSync(join(root, "from-parsed-2", f)).equals(original), f).toBe(true);
      expect(readFileSync(join(again, f)).equals(original), f).toBe(true);
    }
    // prerender: every row's entry text as the parse path renders it
    const pre = createStoreBuilder({ prerender: true });
    await loadNdjson(files, pre);
    const s = pre.build() as BaseStore;
    for (const type of s.types()) {
      const t = s.table(type)!;
      const p = (parsed as BaseStore).table(type)!;
      for (let row = 0; row < t.size; row += 13) expect(t.text(row)).toBe(p.entryText(row));
    }
  });

  it("fall back to parsing, with a warning, when the file changed (same length)", async () => {
    const dir = tmp("stale");
    for (const f of readdirSync(exported)) copyFileSync(join(exported, f), join(dir, f));
    const path = join(dir, "Observation.ndjson");
    const text = readFileSync(path, "utf8");
    const at = text.indexOf('"code":"OPEN"}]}');
    expect(at).toBeGreaterThan(0);
    writeFileSync(path, text.slice(0, at) + '"code":"SHUT"}]}' + text.slice(at + 16));
    const { store, warnings: w } = await load(ndjsonFiles(dir), true);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/Observation\.ndjson\.idx: index not used \(stale: the file's sha256 differs/);
    sameContents(contents(store), contents((await load(ndjsonFiles(dir), false)).store), "stale");
    expect(store.search("Observation", "code=SHUT").total).toBe(1);
    expect(store.search("Observation", "code=OPEN").total).toBe(1);
    // a longer file is refused on its size alone
    appendFileSync(path, `${EXTRA.at(-1)!.replace('"id":"1000107"', '"id":"777777"')}\n`);
    const longer = await load(ndjsonFiles(dir), true);
    expect(longer.warnings.join("\n")).toMatch(/stale \(made for a file of \d+ bytes, this one has \d+\)/);
    expect(longer.store.read("Observation", "777777")).toBeDefined();
  });

  it("fall back to parsing when the sidecar is truncated, garbage, another version, or for another type", async () => {
    const cases: [string, (b: Buffer) => Buffer, RegExp][] = [
      ["truncated", (b) => b.subarray(0, Math.floor(b.length / 2)), /checksum mismatch|truncated/],
      ["empty", () => Buffer.alloc(0), /not an index sidecar/],
      ["garbage", (b) => Buffer.from(b.map((_, i) => (i * 7919) % 251)), /not an index sidecar/],
      ["one flipped byte", (b) => Buffer.from(b.map((x, i) => (i === b.length - 3 ? x ^ 1 : x))), /checksum mismatch/],
      [
        "another version",
        (b) => {
          const c = Buffer.from(b);
          c.writeUInt32LE(999, 8);
          return c;
        },
        /version 999/,
      ],
      ["another type's sidecar", () => readFileSync(join(exported, "Condition.ndjson.idx")), /stale|sha256/],
    ];
    const reference = contents(parsed);
    for (const [name, damage, why] of cases) {
      const dir = tmp(`bad-${name.replace(/\W+/g, "-")}`);
      for (const f of readdirSync(exported)) copyFileSync(join(exported, f), join(dir, f));
      writeFileSync(join(dir, "Observation.ndjson.idx"), damage(readFileSync(join(exported, "Observation.ndjson.idx"))));
      const { store, warnings: w } = await load(ndjsonFiles(dir), true);
      expect(w, name).toHaveLength(1);
      expect(w[0], name).toMatch(why);
      sameContents(contents(store), reference, name);
    }
  });

  it("stay correct when more resources of a sidecar's type come from another file", async () => {
    const dir = tmp("mixed");
    const more = join(dir, "more.ndjson");
    // lower and higher ids than the export's, a patient with few rows, and one without an id
    writeFileSync(
      more,
      [
        `{"resourceType":"Observation","id":"0","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"OPEN"}]},"subject":{"reference":"Patient/S1000003"},"effectiveDateTime":"2019-01-01"}`,
        `{"resourceType":"Observation","id":"5000000","status":"final","code":{"coding":[{"code":"K"}]},"subject":{"reference":"Patient/S1000002"},"effectiveDateTime":"2024-01-01T00:00:00Z","valueQuantity":{"value":4.50}}`,
        `{"resourceType":"Observation","status":"final","code":{"text":"no id"},"subject":{"reference":"Patient/S1000002"}}`,
      ].join("\n") + "\n",
    );
    const order = [...files, more];
    const viaIndex = await load(order, true);
    expect(viaIndex.warnings).toEqual([]);
    const viaParse = await load(order, false);
    sameContents(contents(viaIndex.store), contents(viaParse.store), "mixed");
    expect(viaIndex.store.read("Observation", "5000001")).toMatchObject({ code: { text: "no id" } });
    const a = createFhirService(viaParse.store);
    const b = createFhirService(viaIndex.store);
    for (const q of ["Observation?code=OPEN&_sort=date", "Observation?patient=S1000002&code=K&_sort=-date", "Observation?patient=S1000003", "Observation/0", "Observation/5000000", "Observation/099999"]) {
      expect(stable(b.handleSync({ method: "GET", path: q }).text), q).toBe(stable(a.handleSync({ method: "GET", path: q }).text));
    }
    // the other way round: the builder already holds Observations, so the sidecar is not used
    const reversed = await load([more, ...files], true);
    expect(reversed.warnings).toHaveLength(1);
    expect(reversed.warnings[0]).toMatch(/the load already holds Observation resources/);
    sameContents(contents(reversed.store), contents((await load([more, ...files], false)).store), "reversed");
  });

  it("built from a file's bytes (ehr generate) are the ones exportNdjson writes from the table", async () => {
    const dir = tmp("from-bytes");
    for (const f of files) copyFileSync(f, join(dir, f.split("/").pop()!));
    for (const f of ndjsonFiles(dir)) {
      expect(await writeNdjsonIndex(f)).toEqual({ rows: parsed.countsByType()[f.split("/").pop()!.replace(".ndjson", "")] });
      expect(readFileSync(`${f}.idx`).equals(readFileSync(join(exported, `${f.split("/").pop()}.idx`))), f).toBe(true);
    }
    // written as a stream (with and without the worker thread), in pieces that split lines and characters
    for (const worker of [true, false]) {
      const out = tmp(`stream-${worker}`);
      const stream = await NdjsonIndexStream.start({ worker, maxPendingChars: 1 << 16 });
      expect(stream.threaded).toBe(worker); // tsx is registered in the worker: both paths run here
      for (const f of files) {
        const text = readFileSync(f, "utf8");
        const path = join(out, f.split("/").pop()!);
        writeFileSync(path, "");
        for (let at = 0; at < text.length; at += 7919) {
          appendFileSync(path, text.slice(at, at + 7919));
          stream.write(path, text.slice(at, at + 7919));
        }
      }
      const results = await stream.close();
      expect(results.size).toBe(files.length);
      for (const f of files) {
        const name = f.split("/").pop()!;
        expect(results.get(join(out, name)), name).toEqual({ rows: parsed.countsByType()[name.replace(".ndjson", "")] });
        expect(readFileSync(join(out, `${name}.idx`)).equals(readFileSync(`${f}.idx`)), `${name} worker=${worker}`).toBe(true);
      }
    }
    // files a load would not read line by line as resources with ids get none
    const odd = tmp("odd");
    const cases: [string, string, RegExp][] = [
      ["bundle.ndjson", `{"resourceType":"Bundle","type":"collection","entry":[{"resource":${PATIENTS[0]}}]}\n`, /Bundle/],
      ["noid.ndjson", `${PATIENTS[0]}\n{"resourceType":"Patient","name":[{"family":"X"}]}\n`, /line 2: no valid id/],
      ["mixed.ndjson", `${PATIENTS[0]}\n${OBSERVATIONS[0]}\n`, /a Observation among Patient/],
      ["dup.ndjson", `${PATIENTS[0]}\n${PATIENTS[0]}\n`, /duplicate id/],
      ["bad.ndjson", `${PATIENTS[0]}\n{"resourceType":\n`, /line 2: invalid JSON/],
      ["pretty.json", JSON.stringify(JSON.parse(PATIENTS[0]!), null, 2), /pretty-printed/],
    ];
    for (const [name, text, why] of cases) {
      const path = join(odd, name);
      writeFileSync(path, text);
      writeFileSync(`${path}.idx`, "old");
      const r = await writeNdjsonIndex(path);
      expect("skipped" in r && r.skipped, name).toMatch(why);
      expect(readdirSync(odd), name).not.toContain(`${name}.idx`);
    }
    // blank lines, CRLF and a last line without a newline are indexed as a load reads them
    const crlf = join(odd, "crlf.ndjson");
    writeFileSync(crlf, `\r\n${PATIENTS[0]}\r\n\r\n  ${PATIENTS[1]}\t\r\n${PATIENTS[2]}`);
    expect(await writeNdjsonIndex(crlf)).toEqual({ rows: 3 });
    const viaIndex = await load([crlf], true);
    expect(viaIndex.warnings).toEqual([]);
    expect((viaIndex.store as BaseStore).table("Patient")!.fromFile).toBe(true);
    sameContents(contents(viaIndex.store), contents((await load([crlf], false)).store), "crlf");
  });

  it("are ignored by builders that are not the store's (plain parse)", async () => {
    const seen: string[] = [];
    const sink = { addText: (t: string) => (seen.push(t), {} as never), addResource: () => ({}) as never, size: 0, build: () => parsed };
    await loadNdjson(files, sink as unknown as FhirStoreBuilder);
    expect(seen).toHaveLength(parsed.size);
  });
});
