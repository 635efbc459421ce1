// The chat rendering of ehrgym's token checks: ChatML (`<|im_start|>role\n...<|im_end|>\n`), tool calls
// as Hermes-style `<tool_call>` blocks, the tools offered as a system block first. The stand-in's
// prompt ids are this text's tokens, its completion ids an assistant body's tokens then `<|im_end|>`
// (vLLM returns the end-of-turn token it stopped on); `dataset validate --tokenizer` renders it again.
import { historyMessage, reasoningField, type Message } from "../env/core/index.ts";

export const IM_START = "<|im_start|>";
export const IM_END = "<|im_end|>";
export const GENERATION_PROMPT = `${IM_START}assistant\n`;

type Rendered = Pick<Message, "role" | "content" | "tool_calls" | "reasoning_content" | "reasoning">;

/** What an assistant message says as the model writes it: its reasoning in a `<think>` block (as Qwen3
 *  writes it, and as its template renders it: the reasoning's outer newlines stripped, those of the
 *  content's start too), its content, then each tool call. */
export function assistantBody(m: Pick<Message, "content" | "tool_calls" | "reasoning_content" | "reasoning">): string {
  const reasoning = reasoningField(m)?.replace(/^\n+|\n+$/g, "");
  const content = reasoning ? m.content?.replace(/^\n+/, "") : m.content;
  const parts = content ? [content] : [];
  if (reasoning) parts.unshift(`<think>\n${reasoning}\n</think>\n`);
  for (const c of m.tool_calls ?? []) parts.push(`<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}\n</tool_call>`);
  return parts.join("\n");
}

/** The text between a message's `<|im_start|>` and `<|im_end|>`. */
export const messageInner = (m: Rendered): string => `${m.role}\n${m.role === "assistant" ? assistantBody(m) : (m.content ?? "")}`;

/** The tools block's inner text (a system message before the conversation), when tools are offered. */
export const toolsInner = (tools: readonly unknown[]): string => `system\n# Tools\n<tools>\n${tools.map((t) => JSON.stringify(t)).join("\n")}\n</tools>`;

/** Where a chat's earlier reasoning stops being shown: as Qwen3's template does, an assistant turn's
 *  reasoning is rendered only after the last user message (tool results are not user messages), so in
 *  the text protocol, whose environment replies are user messages, earlier turns lose theirs. */
export const lastUserIndex = (messages: readonly Pick<Message, "role">[]): number => messages.map((m) => m.role).lastIndexOf("user");

/** The message as rendered at `index` of a chat whose last user message is at `lastUser`. */
export const shown = <M extends Rendered>(m: M, index: number, lastUser: number): M => (index > lastUser ? m : (historyMessage(m as Message, "drop") as M));

/** The whole prompt as text, ending with the generation prompt when `generation` (a request's prompt). */
export function renderChat(messages: readonly Rendered[], tools?: readonly unknown[], generation = true): string {
  let text = tools?.length ? `${IM_START}${toolsInner(tools)}${IM_END}\n` : "";
  const lastUser = lastUserIndex(messages);
  messages.forEach((m, i) => (text += `${IM_START}${messageInner(shown(m, i, lastUser))}${IM_END}\n`));
  return generation ? text + GENERATION_PROMPT : text;
}
