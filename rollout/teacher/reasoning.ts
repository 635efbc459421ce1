// `--reasoning think|field`: the stand-in thinks before it acts, and returns the thought as vLLM does
// with a reasoning model: inline as a leading `<think>...</think>` block in `content` (no reasoning parser
// on the server), or apart in the message's `reasoning` field (`--reasoning-parser`, vLLM 0.11 and later;
// `reasoning_content` before). The thought names actions it does not take (GET, POST, FINISH), as real
// reasoning does: a client that read actions or agent text out of it would go wrong.
import { z } from "zod";
import type { Message } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";

export const TeacherReasoning = z.enum(["think", "field"]);
export type TeacherReasoning = z.infer<typeof TeacherReasoning>;

/** The thought behind one turn (deterministic: from the task and the turn). */
export function thoughtFor(task: Task, message: Message): string {
  const instruction = task.instruction.length > 120 ? `${task.instruction.slice(0, 117)}...` : task.instruction;
  const content = message.content?.trimStart() ?? "";
  const calls = (message.tool_calls ?? []).map((c) => c.function.name);
  let plan: string;
  if (calls.length) plan = `Next I call ${calls.join(", ")}; a plain GET, POST or FINISH(...) written here would not be a tool call.`;
  else if (content.startsWith("GET")) plan = "I need the chart first, so the next step is a GET; FINISH([]) would be premature, and nothing needs a POST yet.";
  else if (content.startsWith("POST")) plan = "An order is due: POST it, then FINISH once it is accepted. No further GET is needed.";
  else if (content.startsWith("FINISH")) plan = "I have what I need: FINISH now, with no further GET or POST.";
  else plan = "I am not sure what to do next; maybe GET more data, maybe FINISH([]).";
  return `The task (${task.id}) asks: ${instruction}\n${plan}`;
}

/** The message as the endpoint returns it, reasoning included in the form `mode` names. */
export function withReasoning(message: Message, thought: string, mode: TeacherReasoning): Message {
  if (mode === "field") return { ...message, reasoning: thought };
  const block = `<think>\n${thought}\n</think>\n\n`;
  return { ...message, content: block + (message.content ?? "") };
}
