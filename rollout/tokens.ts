// An episode's captured tokens (`--capture tokens`): rows keep each call's prompt after what the
// previous call already holds (TurnTokens.prompt_reused, read so by rollout/model/tokens.ts), and a
// trajectory reads as TRL's rollout_func returns it: the first prompt's ids, then every completion with
// the environment's tokens between them (mask 0, logprob 0), as TRL's own multi-turn loop concatenates them.
import type { ModelCall, TurnTokens } from "../env/core/index.ts";

/** Each call's whole prompt ids, from stored (compacted) tokens. */
export function fullPrompts(tokens: readonly TurnTokens[]): number[][] {
  const out: number[][] = [];
  let previous: number[] = [];
  for (const t of tokens) {
    const reused = t.prompt_reused ?? 0;
    const prompt = reused ? previous.slice(0, reused).concat(t.prompt_ids) : t.prompt_ids;
    out.push(prompt);
    previous = prompt.concat(t.completion_ids);
  }
  return out;
}

/** What TRL's GRPOTrainer rollout_func returns for one sample (env_mask: 1 model token, 0 environment token). */
export interface TrajectoryTokens {
  prompt_ids: number[];
  completion_ids: number[];
  logprobs: number[];
  env_mask: number[];
}

/**
 * The episode as one token sequence, or why it is not one: a call without tokens, or a prompt that does
 * not extend the previous prompt + completion (the server's chat template re-rendered earlier turns, e.g.
 * dropped their reasoning), where the model's sampled tokens are not what a later turn was conditioned on.
 */
export function trajectoryTokens(calls: readonly Pick<ModelCall, "tokens">[]): TrajectoryTokens | { reason: string } {
  if (calls.length === 0) return { reason: "no model calls" };
  const out: TrajectoryTokens = { prompt_ids: [], completion_ids: [], logprobs: [], env_mask: [] };
  let sequence = 0; // prompt + completion ids so far
  for (const [i, call] of calls.entries()) {
    const t = call.tokens;
    if (!t) return { reason: `turn ${i + 1} has no captured tokens` };
    if (i === 0) {
      if (t.prompt_reused) return { reason: "turn 1 reuses a previous prompt" };
      out.prompt_ids = t.prompt_ids.slice();
    } else {
      if ((t.prompt_reused ?? 0) !== sequence)
        return { reason: `turn ${i + 1}'s prompt does not extend turn ${i}'s prompt + completion (the same first ${t.prompt_reused ?? 0} of ${sequence} ids)` };
      for (const id of t.prompt_ids) {
        out.completion_ids.push(id);
        out.logprobs.push(0);
        out.env_mask.push(0);
      }
    }
    for (const [j, id] of t.completion_ids.entries()) {
      out.completion_ids.push(id);
      out.logprobs.push(t.logprobs[j]!);
      out.env_mask.push(1);
    }
    sequence = out.prompt_ids.length + out.completion_ids.length;
  }
  return out;
}
