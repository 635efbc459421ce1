// Large per-patient lists take the date-sorted path and _sort the precomputed row order (with a
// linear top-k for small first pages); their answers must equal the plain matcher's and a plain sort.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFhirService, createStoreBuilder } from "../../env/fhir/index.ts";
import { matchesAll } from "../../env/fhir/matcher.ts";
import { parseSearch } from "../../env/fhir/query.ts";

function store() {
  const b = createStoreBuilder();
  b.addText(`{"resourceType":"Patient","id":"S1"}`);
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  let last = "2023-01-01";
  for (let i = 0; i < 400; i++) {
    const t = Date.UTC(2023, 0, 1) + Math.floor(rand() * 60) * 86_400_000 + Math.floor(rand() * 86_400) * 1000;
    const when = i % 7 === 0 ? new Date(t).toISOString().slice(0, 10) : new Date(t).toISOString().replace(".000Z", "+00:00");
    const code = i % 3 === 0 ? "K" : "vital";
    // every 11th has no date, every 5th repeats the previous timestamp (ties)
    const effective = i % 11 === 5 ? "" : `,"effectiveDateTime":"${i % 5 === 4 ? last : when}"`;
    if (effective) last = when;
    b.addText(`{"resourceType":"Observation","id":"${1000 + i}","status":"final","category":[{"coding":[{"code":"${code === "K" ? "laboratory" : "vital-signs"}"}]}],"code":{"coding":[{"code":"${code}"}]},"subject":{"reference":"Patient/S1"}${effective}}`);
  }
  return b.build();
}

describe("date-sorted search path", () => {
  const s = store();
  const all = s.byPatient("Observation", "S1");
  it("agrees with the plain matcher for random date windows (property)", () => {
    const day = fc.integer({ min: -5, max: 65 }).map((d) => new Date(Date.UTC(2023, 0, 1) + d * 86_400_000).toISOString().slice(0, 10));
    const value = fc.oneof(
      day,
      fc.tuple(day, fc.integer({ min: 0, max: 23 })).map(([d, h]) => `${d}T${String(h).padStart(2, "0")}:30:00Z`),
    );
    const prefix = fc.constantFrom("", "eq", "ge", "gt", "le", "lt", "sa", "eb", "ne");
    fc.assert(
      fc.property(fc.array(fc.tuple(prefix, value), { minLength: 1, maxLength: 2 }), fc.constantFrom("category=vital-signs", "code=K", ""), (dates, other) => {
        const q = [`patient=S1`, other, ...dates.map(([p, v]) => `date=${p}${v}`)].filter(Boolean).join("&");
        const parsed = parseSearch("Observation", q, { maxCount: 5000 });
        const expected = all.filter((r) => matchesAll(r, parsed.criteria)).map((r) => r.id);
        expect(s.search("Observation", q).resources.map((r) => r.id), q).toEqual(expected);
      }),
      { seed: 99, numRuns: 300 },
    );
  });
});

describe("_sort on big results", () => {
  const s = store();
  const service = createFhirService(s);
  const when = (r: Record<string, unknown>) => (typeof r.effectiveDateTime === "string" ? new Date(r.effectiveDateTime).getTime() : undefined);
  /** The expected order: by date, absent last, ties in id order. */
  function expected(filter: string, descending: boolean): string[] {
    const rows = s.search("Observation", `patient=S1${filter}&_count=5000`).resources;
    return rows
      .map((r, i) => ({ id: r.id!, t: when(r), i }))
      .sort((a, b) => {
        if (a.t === b.t) return a.i - b.i;
        if (a.t === undefined) return 1;
        if (b.t === undefined) return -1;
        return (descending ? b.t - a.t : a.t - b.t) || a.i - b.i;
      })
      .map((r) => r.id);
  }
  const ids = (text: string) => ((JSON.parse(text) as { entry?: { resource: { id: string } }[] }).entry ?? []).map((e) => e.resource.id);

  it("gives every first page and every later page in sort order (property)", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.integer({ min: 1, max: 60 }), fc.constantFrom("", "&code=K", "&category=vital-signs"), (descending, count, filter) => {
        const want = expected(filter, descending);
        const first = service.handleSync({ method: "GET", path: `Observation?patient=S1${filter}&_sort=${descending ? "-" : ""}date&_count=${count}` });
        expect(ids(first.text)).toEqual(want.slice(0, count));
        // follow the next links to the end: the pages together are the whole sorted result
        const seen = ids(first.text);
        let next = (JSON.parse(first.text) as { link: { relation: string; url: string }[] }).link.find((l) => l.relation === "next")?.url;
        while (next) {
          const page = JSON.parse(service.handleSync({ method: "GET", path: next }).text) as { entry?: { resource: { id: string } }[]; link: { relation: string; url: string }[] };
          seen.push(...(page.entry ?? []).map((e) => e.resource.id));
          next = page.link.find((l) => l.relation === "next")?.url;
        }
        expect(seen).toEqual(want);
      }),
      { seed: 7, numRuns: 60 },
    );
  });

  it("sorts an overlay's writes among the base rows", () => {
    const overlay = s.newOverlay();
    const created = overlay.create({ resourceType: "Observation", status: "final", code: { coding: [{ code: "K" }] }, subject: { reference: "Patient/S1" }, effectiveDateTime: "2023-01-20T12:00:00+00:00" });
    const latest = service.handleSync({ method: "GET", path: "Observation?patient=S1&code=K&_sort=-date&_count=200" }, overlay);
    const got = ids(latest.text);
    const t = new Date("2023-01-20T12:00:00Z").getTime();
    const base = expected("&code=K", true);
    const byId = new Map(s.search("Observation", "patient=S1&code=K&_count=5000").resources.map((r) => [r.id!, when(r)]));
    const at = base.findIndex((id) => (byId.get(id) ?? -Infinity) < t);
    expect(got).toEqual([...base.slice(0, at), created.id!, ...base.slice(at)]);
  });
});
