// `--capture tokens`: vLLM's own request fields for token ids and logprobs, and the reply's fields
// read back. Names and shapes as in vLLM's OpenAI-compatible server (ChatCompletionRequest /
// ChatCompletionResponse; `return_token_ids` since v0.10.2): the request's `logprobs: true` and
// `return_token_ids: true`; the reply's top-level `prompt_token_ids`, and per choice `token_ids` and
// `logprobs.content[i].logprob` (one entry per sampled token, the end-of-turn token included).
import { z } from "zod";
import { ModelError, type TurnTokens } from "../../env/core/index.ts";

export const TOKEN_REQUEST_FIELDS = { logprobs: true, return_token_ids: true } as const;

// A prompt is tens of thousands of ids on every turn: checked in one loop (zod's per-element schema cost
// more than the rest of a turn).
const isIds = (v: unknown): v is number[] => {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (!Number.isInteger(x) || x < 0) return false;
  return true;
};
const Ids = z.custom<number[]>(isIds, "expected an array of token ids (integers >= 0)");
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

/** The call's tokens from a chat completion; a ModelError when the endpoint did not answer the fields. */
export function readTurnTokens(completion: unknown): TurnTokens {
  const parsed = Reply.safeParse(completion);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map(String).join(".");
    const missing = issue.path.reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined), completion) === undefined;
    // An endpoint that ignores the fields ignores them on every request: the run stops.
    const message = `--capture tokens: the reply ${missing ? `has no ${where}` : `has a malformed ${where}: ${issue.message}`}; the endpoint must answer vLLM's return_token_ids and logprobs request fields (vLLM >= 0.10.2)`;
    throw new ModelError("model_error", message, missing ? message : undefined);
  }
  const { prompt_token_ids, choices } = parsed.data;
  const choice = choices[0]!;
  if (choice.logprobs.content.length !== choice.token_ids.length)
    throw new ModelError("model_error", `--capture tokens: the reply has ${choice.token_ids.length} completion token ids but ${choice.logprobs.content.length} logprobs`);
  return { prompt_ids: prompt_token_ids, completion_ids: choice.token_ids, logprobs: choice.logprobs.content.map((c) => c.logprob) };
}
