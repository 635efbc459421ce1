// The tokens of one model call, as a vLLM-compatible endpoint returned them (`--capture tokens`):
// what the model was conditioned on and what it sampled, with each sampled token's logprob.
import { z } from "zod";

const TokenId = z.number().int().min(0);

export const TurnTokens = z
  .object({
    /** The first `prompt_reused` ids of this call's prompt are the previous call's prompt ids followed
     *  by its completion ids; `prompt_ids` holds the rest. 0 (or absent): `prompt_ids` is the whole prompt.
     *  Rows store each prompt this way so an episode's ids grow linearly with its turns, not quadratically. */
    prompt_reused: z.number().int().min(0).optional(),
    prompt_ids: z.array(TokenId),
    completion_ids: z.array(TokenId),
    /** One per completion id: the logprob of the sampled token. */
    logprobs: z.array(z.number()),
  })
  .refine((t) => t.logprobs.length === t.completion_ids.length, { message: "logprobs must hold one value per completion id", path: ["logprobs"] });
export type TurnTokens = z.infer<typeof TurnTokens>;
