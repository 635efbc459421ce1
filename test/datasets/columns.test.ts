// Arrow column buffers written by hand (datasets/columns.ts) read back by apache-arrow as the values
// given: nulls anywhere (first, after a run of valid values across a byte of the bitmap, none at all),
// nested lists of structs, 64-bit integers, non-ASCII text.
import { Field, Float64, Int64, List, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, Utf8 } from "apache-arrow";
import { describe, expect, it } from "vitest";
import { ArrowBatchBuilder } from "../../datasets/arrow.ts";
import { columnWriter, type ColumnWriter } from "../../datasets/columns.ts";

const call = new Struct([new Field("id", new Utf8(), true), new Field("args", new Utf8(), true)]);
const schema = new Schema([
  new Field("text", new Utf8(), true),
  new Field("n", new Int64(), true),
  new Field("x", new Float64(), true),
  new Field("calls", new List(new Field("item", call, true)), true),
]);

function ipc(rows: Record<string, unknown>[], writers: ColumnWriter[] = schema.fields.map((f) => columnWriter(f.type))): Uint8Array {
  for (const row of rows) schema.fields.forEach((f, i) => writers[i]!.add(row[f.name] ?? null));
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children: writers.map((w) => w.finish()) }));
  return tableToIPC(new Table([batch]), "stream");
}

function roundTrip(rows: Record<string, unknown>[], writers?: ColumnWriter[]): Record<string, unknown>[] {
  return read(ipc(rows, writers));
}

function read(bytes: Uint8Array): Record<string, unknown>[] {
  const table = tableFromIPC(bytes);
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

  it("writers reset after a batch write the next one as fresh writers do, the first batch's bytes untouched", () => {
    const first = Array.from({ length: 9 }, (_, i) => ({ text: i === 2 ? null : `a${i}`.repeat(50), n: i, x: i === 4 ? null : i, calls: i === 1 ? null : [{ id: `c${i}`, args: null }] }));
    const second = Array.from({ length: 5 }, (_, i) => ({ text: `b${i}`, n: i === 0 ? null : -i, x: 1 / (i + 1), calls: [] }));
    const writers = schema.fields.map((f) => columnWriter(f.type));
    const one = ipc(first, writers);
    const oneCopy = Uint8Array.from(one);
    for (const w of writers) w.reset();
    expect(roundTrip(second, writers)).toEqual(second);
    expect(Buffer.from(one).equals(Buffer.from(oneCopy))).toBe(true);
    expect(read(one)).toEqual(first);
  });
});

describe("ArrowBatchBuilder", () => {
  it("a batch's message stays as it was while the next batch is made in the same buffers", () => {
    const row = (k: number, text: string) => ({
      messages: [
        { role: "user" as const, content: text, tool_calls: null, tool_call_id: null, name: null },
        { role: "assistant" as const, content: null, tool_calls: [{ id: `c${k}`, type: "function" as const, function: { name: "f", arguments: "{}" } }], tool_call_id: null, name: null },
      ],
      tools: null,
      id: String(k).padStart(24, "0"),
      task_id: `t${k}`,
      suite: "mab-v1",
      type: "task1",
      branch: k % 2 ? null : "found",
      kind: "query" as const,
      patient: `S${k}`,
      reward: 1,
      partial_credit: null,
      status: "completed",
      protocol: "text" as const,
      model: "m",
      rounds: k,
      sample: 0,
      prompt_tokens: k,
      completion_tokens: 1,
    });
    const build = (rows: ReturnType<typeof row>[]) => {
      const b = new ArrowBatchBuilder();
      rows.forEach((r) => b.add(r));
      return b.finish();
    };
    const first = build([row(1, "x".repeat(5000)), row(2, "é")]);
    const firstCopy = Uint8Array.from(first);
    const second = build([row(3, "y".repeat(9000))]);
    expect(Buffer.from(first).equals(Buffer.from(firstCopy))).toBe(true);
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(false);
  });
});
