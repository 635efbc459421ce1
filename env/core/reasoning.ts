// How an environment reads an agent turn's reasoning (env/protocol's splitReasoning over the turn's
// forms): the environment's step and the episode loop both read turns through it, so the history the
// policy sees, the transcript and the verdict agree.
import { splitReasoning, type ThinkBlocks } from "../protocol/index.ts";
import type { AgentTurn, Message } from "./types.ts";

/** The reasoning a message carries in a field, under either spelling ("" and null count as none). */
export function reasoningField(m: { reasoning_content?: unknown; reasoning?: unknown }): string | undefined {
  if (typeof m.reasoning_content === "string" && m.reasoning_content) return m.reasoning_content;
  if (typeof m.reasoning === "string" && m.reasoning) return m.reasoning;
  return undefined;
}

/**
 * The turn with its reasoning kept apart: an assistant message whose `content` is the action text and
 * whose `reasoning_content` is the reasoning. A turn without reasoning comes back as it was given (a
 * text turn stays a string); reading a read turn gives the same turn.
 */
export function readAgentTurn(turn: AgentTurn, mode: ThinkBlocks = "split"): AgentTurn {
  if (typeof turn === "string") {
    const r = splitReasoning(turn, undefined, mode);
    return r.reasoning === undefined ? turn : { role: "assistant", content: r.content ?? "", reasoning_content: r.reasoning };
  }
  const field = reasoningField(turn);
  const hasKeys = "reasoning" in turn || "reasoning_content" in turn;
  const r = splitReasoning(turn.content, field, mode);
  if (r.reasoning === undefined && !hasKeys) return turn;
  const { reasoning: _r, reasoning_content: _rc, ...rest } = turn;
  const message: Message = { ...rest, content: r.content === "" && turn.tool_calls?.length ? null : r.content };
  if (r.reasoning !== undefined) message.reasoning_content = r.reasoning;
  return message;
}

/** An assistant message as sent back to a model: without its reasoning unless `keep`. */
export function historyMessage(m: Message, reasoning: "drop" | "keep"): Message {
  if (m.role !== "assistant" || (m.reasoning_content == null && m.reasoning == null)) return m;
  const { reasoning: _r, reasoning_content, ...rest } = m;
  return reasoning === "keep" && reasoning_content ? { ...rest, reasoning_content } : rest;
}
