// The stand-in's answer to vLLM's token request fields (`return_token_ids`, `logprobs`,
// `return_tokens_as_token_ids`), with vLLM's names and shapes: top-level `prompt_token_ids`, per choice
// `token_ids` and `logprobs.content` [{token, logprob, bytes, top_logprobs}]. Deterministic: prompt ids
// are the tokens of the chat rendered as rollout/chatml.ts says (o200k_base, gpt-tokenizer), completion
// ids the assistant body's tokens then `<|im_end|>`, and each logprob a function of (seed, id, position).
import { LRUCache } from "lru-cache";
import { reasoningField, type Message, type Usage } from "../../env/core/index.ts";
import { splitReasoning } from "../../env/protocol/index.ts";
import { assistantBody, GENERATION_PROMPT, IM_END, IM_START, lastUserIndex, messageInner, shown, toolsInner } from "../chatml.ts";
import { textDigest } from "./digest.ts";
import type { ChatRequest } from "./request.ts";

let tokenizer: typeof import("gpt-tokenizer") | undefined;
export async function loadTokenIds(): Promise<void> {
  tokenizer ??= await import("gpt-tokenizer");
}

// Special-token strings inside a message are its text, not markers (what the openai client sent).
const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
function encode(text: string): number[] {
  if (!tokenizer) throw new Error("the tokenizer is not loaded: await loadTokenIds() first");
  return tokenizer.encode(text, AS_TEXT);
}
const special = (name: string): number => {
  if (!tokenizer) throw new Error("the tokenizer is not loaded: await loadTokenIds() first");
  return tokenizer.encode(name, { allowedSpecial: new Set([name]) })[0]!;
};

export const wantsTokens = (r: ChatRequest) => r.return_token_ids === true || r.logprobs === true;

export interface TokenFields {
  prompt_token_ids?: number[];
  token_ids?: number[];
  logprobs?: { content: { token: string; logprob: number; bytes: number[]; top_logprobs: [] }[] };
  usage: Usage;
}

/** A deterministic logprob in (-3, 0] for the token `id` sampled at `position`. */
function logprobOf(seed: number, id: number, position: number): number {
  const x = (Math.imul(id + 1, 2654435761) ^ Math.imul(position + 1, 40503) ^ Math.imul(seed + 1, 97)) >>> 0;
  return -(x % 3000) / 1000;
}

export class TokenIds {
  // The prompt repeats on every turn of an episode: each message's ids are kept by its digest.
  private readonly segments = new LRUCache<string, number[]>({ maxSize: 8_000_000, sizeCalculation: (ids) => Math.max(1, ids.length) });
  private marks: { start: number; end: number; newline: number[]; generation: number[] } | undefined;

  constructor(private readonly seed: number) {}

  private markIds() {
    return (this.marks ??= { start: special(IM_START), end: special(IM_END), newline: encode("\n"), generation: encode(GENERATION_PROMPT.slice(IM_START.length)) });
  }

  private segment(key: string, inner: () => string): number[] {
    let ids = this.segments.get(key);
    if (!ids) this.segments.set(key, (ids = encode(inner())));
    return ids;
  }

  /** The rendered chat's ids: `<|im_start|>`, the inner text, `<|im_end|>`, "\n" per message (the same
   *  ids as the whole text's, since the tokenizer never merges across special tokens). */
  prompt(messages: readonly Message[], digests: readonly string[], tools: readonly unknown[] | undefined, toolsKey: string): number[] {
    const m = this.markIds();
    const ids: number[] = [];
    const push = (inner: number[]) => {
      ids.push(m.start);
      for (const id of inner) ids.push(id);
      ids.push(m.end);
      for (const id of m.newline) ids.push(id);
    };
    if (tools?.length) push(this.segment(`tools:${toolsKey}`, () => toolsInner(tools)));
    // A message's digest leaves its reasoning out (conversations are keyed without it): a turn rendered
    // with its reasoning is another segment.
    const lastUser = lastUserIndex(messages);
    messages.forEach((msg, i) => {
      const rendered = shown(msg, i, lastUser);
      const reasoning = reasoningField(rendered);
      push(this.segment(reasoning ? `${digests[i]}:${textDigest(reasoning)}` : digests[i]!, () => messageInner(rendered)));
    });
    ids.push(m.start);
    for (const id of m.generation) ids.push(id);
    return ids;
  }

  /** vLLM's fields for `request`, answering with `reply`. */
  fields(request: ChatRequest, prompt: number[], reply: Message): TokenFields {
    // What a thinking model samples is its template's form of the turn (an inline think block read apart
    // and rendered back: no extra newline before a tool call after it).
    const { content, reasoning } = splitReasoning(reply.content, reasoningField(reply));
    const completion = [...encode(assistantBody({ ...reply, content, reasoning_content: reasoning })), this.markIds().end];
    const usage = { prompt_tokens: prompt.length, completion_tokens: completion.length, total_tokens: prompt.length + completion.length };
    const out: TokenFields = { usage };
    if (request.return_token_ids) {
      out.prompt_token_ids = prompt;
      out.token_ids = completion;
    }
    if (request.logprobs) {
      const asIds = request.return_tokens_as_token_ids === true;
      out.logprobs = {
        content: completion.map((id, j) => {
          const text = tokenizer!.decode([id]);
          return { token: asIds ? `token_id:${id}` : text, logprob: logprobOf(this.seed, id, j), bytes: [...Buffer.from(text, "utf8")], top_logprobs: [] };
        }),
      };
    }
    return out;
  }
}
