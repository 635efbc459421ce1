// `usage` as a real tokenizer counts it (gpt-tokenizer, o200k_base): the text of each message plus the
// names and arguments of its tool calls. Message formatting tokens and the tools list are not counted.
import { LRUCache } from "lru-cache";
import type { Message, Usage } from "../../env/core/index.ts";

// The tokenizer's module builds its BPE ranks when loaded (~0.5 s): loaded by the stand-in when it
// starts, not by every command that imports rollout/.
let tokenizer: typeof import("gpt-tokenizer") | undefined;

export async function loadTokenizer(): Promise<void> {
  tokenizer ??= await import("gpt-tokenizer");
}

function countTokens(text: string): number {
  if (!tokenizer) throw new Error("the tokenizer is not loaded: await loadTokenizer() first");
  return tokenizer.countTokens(text);
}

/** Tokens of one message by the stand-in's rule. */
export function messageTokens(m: Pick<Message, "content" | "tool_calls" | "reasoning">): number {
  let n = m.content ? countTokens(m.content) : 0;
  if (m.reasoning) n += countTokens(m.reasoning);
  for (const c of m.tool_calls ?? []) n += countTokens(c.function.name) + countTokens(c.function.arguments);
  return n;
}

/** The prompt repeats on every turn of an episode: each message's count is remembered by its digest. */
export class TokenCounter {
  private readonly byDigest = new LRUCache<string, number>({ max: 50_000 });

  count(m: Message, digest: string): number {
    let n = this.byDigest.get(digest);
    if (n === undefined) {
      n = messageTokens(m);
      this.byDigest.set(digest, n);
    }
    return n;
  }

  usage(messages: readonly Message[], digests: readonly string[], reply: Message): Usage {
    let prompt = 0;
    messages.forEach((m, i) => (prompt += this.count(m, digests[i]!)));
    const completion = messageTokens(reply);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
}
