// Reasoning kept apart from actions (PROTOCOL.md section 1, "Reasoning"): an assistant turn's reasoning
// comes in a separate field (vLLM's `reasoning`, earlier `reasoning_content`) or inline as a leading
// `<think>...</think>` block; it is never read as an action. The one parser every surface goes through.
import { z } from "zod";
import { pyLstrip } from "../python/index.ts";

/** `split` (default): an inline think block is reasoning, read as vLLM's reasoning parsers read it.
 *  `official`: the turn text is read as the official harness reads it (a turn opening with `<think>` is invalid). */
export const ThinkBlocks = z.enum(["split", "official"]);
export type ThinkBlocks = z.infer<typeof ThinkBlocks>;

const OPEN = "<think>";
const CLOSE = "</think>";

export interface ReasonedText {
  /** The action text (null stays null: a tool-call turn without text). */
  content: string | null;
  /** Set when the turn carried reasoning (possibly ""), in a field or inline. */
  reasoning?: string;
}

/**
 * Splits one assistant turn. `field` is the reasoning the endpoint returned apart (a non-empty one means
 * the server's reasoning parser already split the text: the content is not searched again, so reading a
 * read turn changes nothing). Inline, in `split` mode:
 * - `<think>R</think>A` (leading whitespace allowed): reasoning R, action A;
 * - `R</think>A` with no `<think>` before it: the chat template opened the block in the prompt (DeepSeek-R1,
 *   Qwen3-2507 and later), as vLLM's deepseek_r1 and qwen3 parsers read it;
 * - `<think>R` never closed (the model ran out of tokens): all reasoning, no action.
 * The action text after reasoning loses its leading whitespace (steps 1-5 and the graders' first-line
 * rules then see it as they would a turn without reasoning). Text without reasoning is returned as is.
 */
export function splitReasoning(content: string | null, field: string | undefined, mode: ThinkBlocks = "split"): ReasonedText {
  if (field) return { content: content === null || mode === "official" ? content : pyLstrip(content), reasoning: field };
  if (mode === "official" || content === null) return { content };
  const body = pyLstrip(content);
  if (body.startsWith(OPEN)) {
    const end = body.indexOf(CLOSE, OPEN.length);
    if (end < 0) return { content: "", reasoning: body.slice(OPEN.length) };
    return { content: pyLstrip(body.slice(end + CLOSE.length)), reasoning: body.slice(OPEN.length, end) };
  }
  const end = content.indexOf(CLOSE);
  if (end >= 0 && !content.slice(0, end).includes(OPEN)) return { content: pyLstrip(content.slice(end + CLOSE.length)), reasoning: content.slice(0, end) };
  return { content };
}
