// Incrementally encoded chat bodies: every turn's bytes parse to exactly the body the client would
// have serialized from scratch.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../../env/core/index.ts";
import { ChatBodies } from "../../rollout/model/body.ts";

const parse = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString("utf8")) as unknown;

const message = fc.record({
  role: fc.constantFrom("user" as const, "assistant" as const, "tool" as const),
  content: fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 200 }),
    fc.string({ maxLength: 5000 }),
    fc.string({ unit: "grapheme", minLength: 8000, maxLength: 20_000 }), // long contents are written in slices
    fc.constant(null),
  ),
});

describe("chat bodies", () => {
  it("each turn of a growing conversation encodes the whole body", () => {
    fc.assert(
      fc.property(fc.array(fc.array(message, { maxLength: 4 }), { maxLength: 8 }), fc.boolean(), (turns, withTools) => {
        const fields = { temperature: 0.5, model: "m" };
        const tools = withTools ? [{ type: "function", function: { name: "f", parameters: {} } }] : undefined;
        const bodies = new ChatBodies(fields);
        const conversation: Message[] = [];
        for (const added of turns) {
          conversation.push(...(added as Message[]));
          expect(parse(bodies.encode(conversation, tools))).toEqual({ ...fields, ...(tools ? { tools } : {}), messages: conversation });
        }
      }),
    );
  });

  it("keeps surrogate pairs whole across the slices of a long content", () => {
    const content = "a" + "\u{1F600}".repeat(20_000) + '"quoted"\n';
    const bytes = new ChatBodies({ model: "m" }).encode([{ role: "tool", content, tool_call_id: "call_1" }]);
    expect(Buffer.from(bytes).toString("utf8")).not.toContain("\\ud");
    expect(parse(bytes)).toEqual({ model: "m", messages: [{ role: "tool", content, tool_call_id: "call_1" }] });
  });

  it("re-encodes a conversation whose sent messages were replaced or cut", () => {
    const bodies = new ChatBodies({ model: "m" });
    const conversation: Message[] = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ];
    bodies.encode(conversation);
    conversation[1] = { role: "assistant", content: "c" };
    expect(parse(bodies.encode(conversation))).toEqual({ model: "m", messages: conversation });
    conversation.pop();
    expect(parse(bodies.encode(conversation))).toEqual({ model: "m", messages: conversation });
  });

  it("`messages` and `tools` among the extra fields never appear twice", () => {
    const bodies = new ChatBodies({ model: "m", messages: "x", tools: "y" });
    const text = Buffer.from(bodies.encode([{ role: "user", content: "hi" }])).toString("utf8");
    expect(text).toBe('{"model":"m","messages":[{"role":"user","content":"hi"}]}');
  });
});
