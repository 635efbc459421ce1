// `stream: true`: the completion the stand-in would return, as OpenAI's server-sent events (one
// delta with the whole message, a finish chunk, a usage chunk when asked, then [DONE]), for clients
// that only stream (agent harnesses such as verifiers' chat program).
import type { ChatCompletion } from "./completions.ts";

export function completionEvents(completion: ChatCompletion, includeUsage: boolean): string {
  const { id, created, model } = completion;
  const head = { id, object: "chat.completion.chunk", created, model, system_fingerprint: completion.system_fingerprint };
  const events: unknown[] = [];
  for (const choice of completion.choices) {
    const m = choice.message;
    const delta: Record<string, unknown> = { role: m.role, content: m.content };
    const reasoning = (m as { reasoning?: string }).reasoning;
    if (reasoning) delta.reasoning = reasoning;
    if (m.tool_calls?.length) delta.tool_calls = m.tool_calls.map((c, index) => ({ index, ...c }));
    events.push({ ...head, choices: [{ index: choice.index, delta, logprobs: null, finish_reason: null }] });
    events.push({ ...head, choices: [{ index: choice.index, delta: {}, logprobs: null, finish_reason: choice.finish_reason }] });
  }
  if (includeUsage) events.push({ ...head, choices: [], usage: completion.usage });
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
}
