// The dataset writers' JSON lines (written a message and a long string's slice at a time) are
// JSON.stringify of the record and a newline, byte for byte.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteBuilder } from "../../datasets/chunk.ts";

const longText = fc.oneof(
  fc.string({ unit: "binary", minLength: 8000, maxLength: 30_000 }), // lone surrogates and controls included
  fc.string({ unit: "grapheme", minLength: 8000, maxLength: 20_000 }),
  fc.constant("a" + "\u{1F600}".repeat(9000) + '"\\\n'), // surrogate pairs across every slice boundary
);
const message = fc.record(
  {
    role: fc.constantFrom("user", "assistant", "tool"),
    content: fc.oneof(fc.string({ unit: "binary", maxLength: 100 }), longText, fc.constant(null), fc.constant(undefined)),
    tool_calls: fc.array(fc.record({ id: fc.string(), function: fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), longText) }) }), { maxLength: 2 }),
    nested: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.jsonValue({ maxDepth: 2 }), longText), { maxKeys: 2 }),
    weight: fc.oneof(fc.constant(0), fc.constant(1), fc.double()),
  },
  { requiredKeys: ["role"] },
);

describe("ByteBuilder.jsonLine", () => {
  it("writes JSON.stringify(record) and a newline", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 4 }), // Rows put `messages` first; integer-like keys would sort before it in any object.
      fc.dictionary(fc.string({ maxLength: 6 }).map((k) => `k${k}`), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), (messages, rest) => {
        const record = { ...rest, messages };
        const b = new ByteBuilder(16);
        b.jsonLine(record);
        const { messages: _, ...after } = record;
        expect(Buffer.from(b.bytes()).toString("utf8")).toBe(`${JSON.stringify({ messages, ...after })}\n`);
      }),
      { numRuns: 150 },
    );
  });

  it("a builder copying long strings from another writes its own record exactly", () => {
    fc.assert(
      fc.property(fc.array(fc.array(message, { maxLength: 3 }), { minLength: 1, maxLength: 3 }), (rows) => {
        const first = new ByteBuilder(16);
        const second = new ByteBuilder(16, first);
        const expected: string[] = [];
        for (const messages of rows) {
          // The second record holds the same long strings in other messages and fields (as the openai line does).
          const other = messages.map((m) => ({ content: m.content, role: m.role, weight: 1 }));
          first.jsonLine({ messages });
          second.jsonLine({ messages: other });
          expected.push(`${JSON.stringify({ messages: other })}\n`);
        }
        expect(Buffer.from(second.bytes()).toString("utf8")).toBe(expected.join(""));
      }),
      { numRuns: 100 },
    );
  });
});
