// The one reasoning parser (env/protocol splitReasoning, env/core readAgentTurn): what it splits, what it
// leaves untouched (turns without reasoning: parity with the official harness), and that reading a read
// turn changes nothing (the episode loop reads a turn, then the environment's step reads it again).
import { describe, expect, it } from "vitest";
import { readAgentTurn, type AgentTurn } from "../../env/core/index.ts";
import { parseTextTurn, splitReasoning } from "../../env/protocol/index.ts";

describe("splitReasoning", () => {
  it.each([
    ["<think>R</think>GET x", { content: "GET x", reasoning: "R" }],
    ["  \n<think>\nR\n</think>\n\nFINISH([1])", { content: "FINISH([1])", reasoning: "\nR\n" }],
    ["<think>FINISH([1])</think>FINISH([2])", { content: "FINISH([2])", reasoning: "FINISH([1])" }],
    ["R, then GET x\n</think>\n\nGET y", { content: "GET y", reasoning: "R, then GET x\n" }],
    ["<think>GET x", { content: "", reasoning: "GET x" }],
    ["<think></think>\nGET x", { content: "GET x", reasoning: "" }],
  ])("%j", (text, expected) => {
    expect(splitReasoning(text, undefined)).toEqual(expected);
    expect(splitReasoning(text, undefined, "official")).toEqual({ content: text });
  });

  it.each(["GET http://h/fhir/Patient?x=1", "  POST http://h/fhir/Observation\n{}", "FINISH([\"<think>\"])", "I think FINISH([1])", "", "```tool_code\nGET x\n```"])(
    "leaves a turn without reasoning untouched: %j",
    (text) => {
      expect(splitReasoning(text, undefined)).toEqual({ content: text });
      expect(readAgentTurn(text)).toBe(text);
    },
  );

  it("a reasoning field means the server split the text already: the content is not searched again", () => {
    expect(splitReasoning("\n\n<think>x</think>GET y", "R")).toEqual({ content: "<think>x</think>GET y", reasoning: "R" });
    expect(parseTextTurn(splitReasoning("<think>x</think>GET y", "R").content!).kind).toBe("INVALID");
  });
});

describe("readAgentTurn", () => {
  const turns: AgentTurn[] = [
    "<think>R</think>\n\nGET x",
    "R</think>FINISH([1])",
    { role: "assistant", content: "\n\nGET x", reasoning: "R" },
    { role: "assistant", content: "FINISH([1])", reasoning_content: "R", reasoning: null },
    { role: "assistant", content: "<think>R</think>", tool_calls: [{ id: "c", type: "function", function: { name: "finish", arguments: "{}" } }] },
    { role: "assistant", content: "GET x", reasoning_content: null },
  ];
  it.each(turns.map((t) => [JSON.stringify(t), t] as const))("%s: reading it again changes nothing", (_, turn) => {
    const once = readAgentTurn(turn);
    expect(readAgentTurn(once)).toEqual(once);
    if (typeof once !== "string") expect(once).not.toHaveProperty("reasoning");
  });

  it("keeps the reasoning on the message and the action text in content (null beside tool calls)", () => {
    expect(readAgentTurn("<think>R</think>\n\nGET x")).toEqual({ role: "assistant", content: "GET x", reasoning_content: "R" });
    expect(readAgentTurn({ role: "assistant", content: "\n\nGET x", reasoning: "R" })).toEqual({ role: "assistant", content: "GET x", reasoning_content: "R" });
    expect(readAgentTurn(turns[4]!)).toMatchObject({ content: null, reasoning_content: "R" });
    expect(readAgentTurn(turns[5]!)).toEqual({ role: "assistant", content: "GET x" });
  });
});
