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

describe("chat body buffers", () => {
  it("a released conversation's buffer serves later ones, and every body stays whole", () => {
    fc.assert(
      fc.property(fc.array(fc.array(message, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 4 }), (turns, parallel) => {
        const bodies = new ChatBodies({ model: "m" });
        // `parallel` conversations in lockstep; each is released when done and a new one starts in its place.
        for (let round = 0; round < 3; round++) {
          const conversations: Message[][] = Array.from({ length: parallel }, () => []);
          for (const added of turns) {
            for (const [i, conversation] of conversations.entries()) {
              conversation.push(...(added as Message[]).map((m) => ({ ...m, content: m.content === null ? null : `${i}:${m.content}` })));
              expect(parse(bodies.encode(conversation))).toEqual({ model: "m", messages: conversation });
            }
          }
          for (const [i, conversation] of conversations.entries()) (i % 2 ? bodies.discard : bodies.release).call(bodies, conversation);
        }
      }),
      { numRuns: 50 },
    );
  });

  it("a released conversation sent again starts over", () => {
    const bodies = new ChatBodies({ model: "m" });
    const conversation: Message[] = [{ role: "user", content: "x".repeat(100_000) }];
    bodies.encode(conversation);
    bodies.release(conversation);
    const other: Message[] = [{ role: "user", content: "y".repeat(200_000) }];
    bodies.encode(other);
    conversation.push({ role: "assistant", content: "z" });
    expect(parse(bodies.encode(conversation))).toEqual({ model: "m", messages: conversation });
    expect(parse(bodies.encode(other))).toEqual({ model: "m", messages: other });
  });
});

describe("a conversation's sent messages handed over (detach)", () => {
  it("are exactly the messages' JSON joined by commas, and stay so while later conversations reuse other buffers", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(message, { minLength: 1, maxLength: 4 }), (mine, theirs) => {
        const bodies = new ChatBodies({ model: "m" });
        const conversation = mine as Message[];
        bodies.encode(conversation);
        const sent = bodies.detach(conversation)!;
        expect(sent.count).toBe(conversation.length);
        const expected = Buffer.from(conversation.map((m) => JSON.stringify(m)).join(","));
        // Another conversation encoded while the bytes are held must not write over them.
        const other = theirs as Message[];
        bodies.encode(other);
        bodies.release(other);
        bodies.encode([...other]);
        expect(Buffer.from(sent.bytes).equals(expected)).toBe(true);
        sent.done();
        sent.done(); // twice is once
        expect(bodies.detach(conversation)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it("once given back, the buffer serves the next conversation", () => {
    const bodies = new ChatBodies({ model: "m" });
    const first: Message[] = [{ role: "user", content: "x".repeat(300_000) }];
    const held = bodies.encode(first);
    const sent = bodies.detach(first)!;
    sent.done();
    const next: Message[] = [{ role: "user", content: "y" }];
    const body = bodies.encode(next);
    expect(body.buffer).toBe(held.buffer);
    expect(parse(body)).toEqual({ model: "m", messages: next });
  });

  it("a conversation whose last request failed (discarded) has nothing to hand over", () => {
    const bodies = new ChatBodies({ model: "m" });
    const conversation: Message[] = [{ role: "user", content: "q" }];
    bodies.encode(conversation);
    bodies.discard(conversation);
    expect(bodies.detach(conversation)).toBeUndefined();
  });
});

describe("chat bodies past their first buffer", () => {
  it("a conversation that outgrows its buffer (and the next size) keeps every body whole, then hands over all its messages", () => {
    const bodies = new ChatBodies({ model: "m" });
    const conversation: Message[] = [{ role: "user", content: "prompt" }];
    // 3 MB, then 6 MB, then 12 MB of content: grows from the first buffer to a bigger one, twice.
    for (const [i, size] of [3, 6, 12].entries()) {
      conversation.push({ role: "assistant", content: `GET ${i}` });
      conversation.push({ role: "user", content: `${i}\n"${"é".repeat(1000)}${"r".repeat(size << 20)}` });
      expect(parse(bodies.encode(conversation))).toEqual({ model: "m", messages: conversation });
    }
    const sent = bodies.detach(conversation)!;
    expect(Buffer.from(sent.bytes).toString("utf8")).toBe(conversation.map((m) => JSON.stringify(m)).join(","));
    sent.done();
  });
});
