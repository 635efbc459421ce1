// `--capture tokens`: vLLM's own request fields for token ids and logprobs, and the reply's fields
// read back. Names and shapes as in vLLM's OpenAI-compatible server (ChatCompletionRequest /
// ChatCompletionResponse; `return_token_ids` since v0.10.2): the request's `logprobs: true` and
// `return_token_ids: true`; the reply's top-level `prompt_token_ids`, and per choice `token_ids` and
// `logprobs.content[i].logprob` (one entry per sampled token, the end-of-turn token included).
//
// vLLM sends the whole prompt's ids on every turn (tens of thousands late in an episode), and almost all
// of them are the previous call's prompt: a reply body is parsed with that array's text set aside, the
// part the previous reply already held is recognised by comparing text, and only the ids after it are
// parsed. Each call's tokens come out as rows store them (TurnTokens.prompt_reused: the ids the previous
// call's prompt + completion share with this prompt), the same as comparing the whole arrays would give.
import { z } from "zod";
import { ModelError, type TurnTokens } from "../../env/core/index.ts";

export const TOKEN_REQUEST_FIELDS = { logprobs: true, return_token_ids: true } as const;

const isIds = (v: unknown): v is number[] => {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (!Number.isInteger(x) || x < 0) return false;
  return true;
};
const IDS_MESSAGE = "expected an array of token ids (integers >= 0)";
const Ids = z.custom<number[]>(isIds, IDS_MESSAGE);
const Reply = z.object({
  prompt_token_ids: Ids,
  choices: z
    .array(
      z.object({
        token_ids: Ids,
        logprobs: z.object({ content: z.array(z.object({ logprob: z.number() })) }),
      }),
    )
    .min(1),
});

const PROMPT_KEY = '"prompt_token_ids"';
const OPEN_ARRAY = /\s*:\s*\[/y;

/**
 * A 2xx reply body's JSON; with `promptAside`, the top-level `prompt_token_ids` array's inner text is
 * returned apart and the parsed reply holds `[]` there. Anything unexpected (no such key, not an array,
 * the key nested elsewhere) parses the whole body as it is. Throws SyntaxError when the body is not JSON.
 */
export function parseReplyBody(body: string, promptAside: boolean): { data: unknown; promptText?: string } {
  const key = promptAside ? body.indexOf(PROMPT_KEY) : -1;
  if (key < 0) return { data: JSON.parse(body) };
  OPEN_ARRAY.lastIndex = key + PROMPT_KEY.length;
  const start = OPEN_ARRAY.test(body) ? OPEN_ARRAY.lastIndex : -1;
  const end = start < 0 ? -1 : body.indexOf("]", start);
  if (end <= start) return { data: JSON.parse(body) };
  let data: unknown;
  try {
    data = JSON.parse(body.slice(0, start) + body.slice(end));
  } catch {
    return { data: JSON.parse(body) }; // the array held something other than numbers
  }
  // The emptied array must be the top-level one (a quote inside a JSON string is always escaped, so the
  // key's text is a key; only its depth is unknown until parsed).
  const aside = (data as { prompt_token_ids?: unknown } | null)?.prompt_token_ids;
  if (!Array.isArray(aside) || aside.length !== 0) return { data: JSON.parse(body) };
  return { data, promptText: body.slice(start, end) };
}

const malformed = (where: string, detail: string) => new ModelError("model_error", `--capture tokens: the reply has a malformed ${where}: ${detail}`);

/** The ids in an array's inner text (never empty: an empty array is not set aside, nor is what follows a comma). */
function parseIds(text: string): number[] {
  let ids: unknown;
  try {
    ids = text.trim() ? JSON.parse(`[${text}]`) : undefined;
  } catch {
    ids = undefined;
  }
  if (!isIds(ids)) throw malformed("prompt_token_ids", IDS_MESSAGE);
  return ids;
}

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const max = Math.min(a.length, b.length);
  let n = 0;
  while (n < max && a[n] === b[n]) n++;
  return n;
}

const SEPARATOR = /\s*,/y;

/** One episode's model calls, read in order. */
export class EpisodeTokens {
  private previous: { promptText: string | undefined; prompt: number[] | undefined; length: number; completion: number[] } | undefined;

  /**
   * The call's tokens from a parsed reply (and the prompt ids' text parseReplyBody set aside); a
   * ModelError when the endpoint did not answer the fields (fatal: it ignores them on every request) or
   * answered them malformed.
   */
  read(completion: unknown, promptText?: string): TurnTokens {
    const parsed = Reply.safeParse(completion);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.map(String).join(".");
      const missing = issue.path.reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined), completion) === undefined;
      if (!missing) throw malformed(where, issue.message);
      const message = `--capture tokens: the reply has no ${where}; the endpoint must answer vLLM's return_token_ids and logprobs request fields (vLLM >= 0.10.2)`;
      throw new ModelError("model_error", message, message);
    }
    const choice = parsed.data.choices[0]!;
    if (choice.logprobs.content.length !== choice.token_ids.length)
      throw new ModelError("model_error", `--capture tokens: the reply has ${choice.token_ids.length} completion token ids but ${choice.logprobs.content.length} logprobs`);

    const previous = this.previous;
    let reused = 0;
    let prompt: number[]; // after the reused ids
    let whole: number[] | undefined; // the whole prompt, when it was parsed whole
    const known = previous?.promptText ?? "";
    SEPARATOR.lastIndex = known.length;
    // (`slice() ===` compares memory; `startsWith` goes a character at a time, as slowly as parsing.)
    if (previous && known && promptText?.slice(0, known.length) === known && (promptText.length === known.length || SEPARATOR.test(promptText))) {
      // The previous prompt's ids, by their text; then as much of its completion as this prompt repeats.
      const rest = promptText.length === known.length ? [] : parseIds(promptText.slice(SEPARATOR.lastIndex));
      const fromCompletion = sharedPrefix(rest, previous.completion);
      reused = previous.length + fromCompletion;
      prompt = fromCompletion ? rest.slice(fromCompletion) : rest;
    } else {
      whole = promptText === undefined ? parsed.data.prompt_token_ids : parseIds(promptText);
      if (previous) {
        const before = (previous.prompt ?? parseIds(previous.promptText!)).concat(previous.completion);
        reused = sharedPrefix(whole, before);
      }
      prompt = reused ? whole.slice(reused) : whole;
    }
    this.previous = { promptText, prompt: promptText === undefined ? whole : undefined, length: reused + prompt.length, completion: choice.token_ids };
    const logprobs = choice.logprobs.content.map((c) => c.logprob);
    return reused ? { prompt_reused: reused, prompt_ids: prompt, completion_ids: choice.token_ids, logprobs } : { prompt_ids: prompt, completion_ids: choice.token_ids, logprobs };
  }
}
