// Arrow column buffers written by hand (datasets/columns.ts) read back by apache-arrow as the values
// given: nulls anywhere (first, after a run of valid values across a byte of the bitmap, none at all),
// nested lists of structs, 64-bit integers, non-ASCII text.
import { Field, Float64, Int64, List, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, Utf8 } from "apache-arrow";
import { describe, expect, it } from "vitest";
import { columnWriter } from "../../datasets/columns.ts";

const call = new Struct([new Field("id", new Utf8(), true), new Field("args", new Utf8(), true)]);
const schema = new Schema([
  new Field("text", new Utf8(), true),
  new Field("n", new Int64(), true),
  new Field("x", new Float64(), true),
  new Field("calls", new List(new Field("item", call, true)), true),
]);

function roundTrip(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const writers = schema.fields.map((f) => columnWriter(f.type));
  for (const row of rows) schema.fields.forEach((f, i) => writers[i]!.add(row[f.name] ?? null));
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children: writers.map((w) => w.finish()) }));
  const table = tableFromIPC(tableToIPC(new Table([batch]), "stream"));
  return table.toArray().map((r) => {
    const o = r!.toJSON() as Record<string, unknown>;
    const calls = o.calls as { toArray(): ({ toJSON(): unknown } | null)[] } | null;
    return { text: o.text, n: o.n === null ? null : Number(o.n as bigint), x: o.x, calls: calls === null ? null : calls.toArray().map((c) => (c === null ? null : c.toJSON())) };
  });
}

describe("columnWriter", () => {
  it("writes values and nulls that apache-arrow reads back as given", () => {
    const rows = Array.from({ length: 21 }, (_, i) => ({
      text: i === 0 || i === 9 || i === 20 ? null : `row ${i} ${"é✓".repeat(i)}${"x".repeat(i * 300)}`,
      n: i === 12 ? null : 2 ** 40 + i,
      x: i === 3 ? null : i / 7,
      calls: i % 5 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => (k === 1 ? null : { id: `c${i}.${k}`, args: k === 2 ? null : `{"k":${k}}` })),
    }));
    expect(roundTrip(rows)).toEqual(rows);
  });

  it("writes a batch without nulls with no validity bitmap, and an empty batch", () => {
    const rows = [{ text: "a", n: 1, x: 0.5, calls: [] }, { text: "", n: -1, x: -0.5, calls: [{ id: "i", args: "" }] }];
    expect(roundTrip(rows)).toEqual(rows);
    const writer = columnWriter(new Utf8());
    writer.add("a");
    expect(writer.finish().nullBitmap?.length ?? 0).toBe(0);
    expect(roundTrip([])).toEqual([]);
  });
});
