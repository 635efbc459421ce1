// parseRowLine gives exactly JSON.parse(line), long message contents in parts, for lines of every
// shape; the parts escape, encode and search as the whole text does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrowBatchBuilder } from "../../datasets/arrow.ts";
import { ByteBuilder } from "../../datasets/chunk.ts";
import { plainRow, toTrlRow, type EpisodeRowOf } from "../../datasets/convert.ts";
import { HeldOut } from "../../datasets/exclude.ts";
import { LongText, parseRowLine, type Text } from "../../datasets/rowline.ts";

/** The value with every LongText made its string. */
function plain(v: unknown): unknown {
  if (v instanceof LongText) return v.text();
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const fragment = fc.constantFrom(
  '{"resourceType":"Observation","id":"obs-1","valueQuantity":{"value":1.5,"unit":"mg/dL"}}',
  "Patient S2521336 has MRN S2521336.",
  "S1023381-",
  "\u{1F600}",
  "é and 中文",
  "\n",
  "\t",
  "\\",
  '"',
  "\u0001\u001f",
  "\ud800", // a lone surrogate (JSON.stringify escapes it)
  "\u2028",
  "/path/to",
  "}]",
  "},{\"role\":\"user\"}",
  "a".repeat(40_000), // no escape for a long stretch
  " ".repeat(3),
  "0123456789",
);
/** A long text (over the 64 KB a message needs to be read in parts). */
const longText = fc.array(fragment, { minLength: 1, maxLength: 40 }).map((fs) => {
  const unit = fs.join("");
  return unit.repeat(Math.ceil(70_000 / unit.length));
});
const shortText = fc.string({ unit: "binary", maxLength: 60 });

const message = fc.oneof(
  fc.record({ role: fc.constantFrom("user", "system"), content: fc.oneof(longText, shortText) }),
  fc.record({ role: fc.constant("tool"), tool_call_id: fc.constant("call_1"), content: fc.oneof(longText, shortText) }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.oneof(fc.constant(null), shortText),
    tool_calls: fc.constant([{ id: "call_1", type: "function", function: { name: "fhir_get", arguments: '{"url":"x"}' } }]),
  }),
);
const row = fc.record({
  task_id: fc.constant("mab-v1/task1/1-1"),
  suite: fc.constant("mab-v1"),
  checks: fc.constant([{ name: "answer", ok: true }]),
  messages: fc.array(message, { minLength: 1, maxLength: 5 }),
  policy: fc.constant({ kind: "expert", model: "scripted-expert" }),
  // after the messages, with `}]` of its own (as a tool list's JSON schema has)
  tools: fc.oneof(
    fc.constant(undefined),
    fc.constant([1, 2, 3, 4, 5].map((k) => ({ type: "function", function: { name: `f${k}`, parameters: { anyOf: [{ type: "object" }, { enum: [{ a: 1 }] }] } } }))),
  ),
  sample: fc.nat(9),
});

/** What other writers make of the same row: ASCII-only escapes (Python's json.dumps), `\/`, spaces, CRLF, messages last. */
const foreign = [
  (r: object) => JSON.stringify(r).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  (r: object) => JSON.stringify(r).replaceAll("/", "\\/"),
  (r: object) => JSON.stringify(r, null, 1).replaceAll("\n", ""),
  (r: object) => `${JSON.stringify(r)}\r`,
  (r: { messages: unknown[] }) => {
    const { messages, ...rest } = r;
    return JSON.stringify({ ...rest, messages });
  },
  (r: { messages: { role: string; content: unknown }[] }) => JSON.stringify({ ...r, messages: r.messages.map(({ role, ...m }) => ({ ...m, role })) }),
];

describe("parseRowLine", () => {
  it("is JSON.parse of the line, long contents as LongText, for the rows ehrgym writes", () => {
    fc.assert(
      fc.property(row, (r) => {
        const line = JSON.stringify(r);
        const got = parseRowLine(Buffer.from(line)) as { messages: { content: Text | null }[] };
        expect(plain(got)).toStrictEqual(JSON.parse(line));
        // a long content is read in parts
        got.messages.forEach((m, i) => {
          const text = r.messages[i]!.content;
          if (typeof text === "string" && text.length > 70_000) expect(m.content).toBeInstanceOf(LongText);
        });
      }),
      { numRuns: 60 },
    );
  });

  it("is JSON.parse of the line for rows written by other writers", () => {
    fc.assert(
      fc.property(row, fc.integer({ min: 0, max: foreign.length - 1 }), (r, k) => {
        const line = foreign[k]!(r as never);
        expect(plain(parseRowLine(Buffer.from(line)))).toStrictEqual(JSON.parse(line));
      }),
      { numRuns: 60 },
    );
  });

  it("throws where JSON.parse throws, and agrees where a broken-looking line still parses", () => {
    const breakers = [
      (l: string) => l.slice(0, Math.floor(l.length * 0.7)), // torn
      (l: string) => l.replace("Patient", 'Pat"ient'), // a raw quote inside a long content
      (l: string) => l.replace("Patient", "Pat\\xient"), // not an escape
      (l: string) => l.replace('"}]', '\\"}]'), // the last content's closing quote escaped
      (l: string) => l.replace('"messages":[', '"messages":[1,'),
      (l: string) => l.replace('"policy":', '"messages":["\\u0000ehrgym"],"policy":'), // a second messages key
      (l: string) => l.replace('"messages":[', '"messages":[],"x":['),
      (l: string) => l.replace("é", "\ufffd"),
    ];
    fc.assert(
      fc.property(row, fc.integer({ min: 0, max: breakers.length - 1 }), (r, k) => {
        const line = breakers[k]!(JSON.stringify(r));
        let expected: unknown;
        try {
          expected = JSON.parse(line);
        } catch {
          expect(() => parseRowLine(Buffer.from(line))).toThrow(SyntaxError);
          return;
        }
        expect(plain(parseRowLine(Buffer.from(line)))).toStrictEqual(expected);
      }),
      { numRuns: 120 },
    );
  });

  it("cuts a long text only before a character no MRN or surrogate pair runs across, in parts under 128 KB", () => {
    fc.assert(
      fc.property(longText, (text) => {
        const got = parseRowLine(Buffer.from(JSON.stringify({ messages: [{ role: "tool", content: text }, { role: "assistant", content: "done" }] }))) as { messages: { content: Text }[] };
        const long = got.messages[0]!.content;
        expect(long).toBeInstanceOf(LongText);
        const parts = (long as LongText).parts;
        expect(parts.join("")).toBe(text);
        parts.slice(1).forEach((p) => expect(p[0]).toMatch(/[^A-Za-z0-9.\-\udc00-\udfff]/));
        // A part runs ~32 KB of escaped text, then to the next place it may end.
        let gap = 0;
        let run = 0;
        for (const c of text) {
          run = /^[\n\t"\\ -,/:-@[-`{-~]$/.test(c) && c !== "-" && c !== "." ? 0 : run + c.length;
          gap = Math.max(gap, run);
        }
        for (const p of parts) expect(p.length).toBeLessThanOrEqual((32 << 10) + gap + 1);
        const mrns = new HeldOut([{ path: "x", mrns: ["S2521336", "S1023381", "a"] }]);
        expect(mrns.hit("", [long])).toBe(mrns.hit("", [text]));
      }),
      { numRuns: 60 },
    );
  });

  it("rows with LongText contents write the same JSON line and Arrow batch as with strings", () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 3 }), (rows) => {
        const episode = (r: (typeof rows)[number]) => ({
          ...r,
          type: "task1",
          kind: "query" as const,
          protocol: "text" as const,
          reward: 1,
          status: "completed" as const,
          rounds: 1,
          tools: undefined,
        });
        const parsed = rows.map((r) => toTrlRow(parseRowLine(Buffer.from(JSON.stringify(episode(r)))) as EpisodeRowOf<Text>));
        const strings = parsed.map(plainRow);
        const a = new ByteBuilder(16);
        const b = new ByteBuilder(16);
        parsed.forEach((r) => a.jsonLine(r));
        strings.forEach((r) => b.jsonLine(r));
        expect(Buffer.from(a.bytes()).equals(Buffer.from(b.bytes()))).toBe(true);
        expect(Buffer.from(a.bytes()).toString()).toBe(strings.map((r) => `${JSON.stringify(r)}\n`).join(""));
        const batch = (rs: readonly Parameters<ArrowBatchBuilder["add"]>[0][]) => {
          const b = new ArrowBatchBuilder();
          rs.forEach((r) => b.add(r));
          return Buffer.from(b.finish());
        };
        expect(batch(parsed).equals(batch(strings))).toBe(true);
      }),
      { numRuns: 25 },
    );
  });
});
