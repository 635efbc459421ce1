// Format tokens (`dataset build --format tokens`): per trajectory, what TRL's GRPOTrainer
// `rollout_func` returns for a sample: `prompt_ids` (the first call's prompt), `completion_ids` (every
// completion, with the environment's tokens between them), `logprobs` (the sampled tokens' logprobs, 0
// for environment tokens) and `env_mask` (1 model token, 0 environment token; TRL reads it as the
// tool mask). Its own config (`tokens`), files under tokens/ written like every config's (shards.ts:
// JSONL, and Arrow when built), features declared in the card.
import { z } from "zod";
import { trajectoryTokens, type EpisodeRow } from "../rollout/index.ts";
import type { CardConfig } from "./card.ts";
import type { ManifestFile } from "./manifest.ts";
import { jsonValue, TrlTool, type TrlRow } from "./schema.ts";
import { SplitWriter, type SplitOptions } from "./shards.ts";

const Id = z.int().min(0);
/** A message as the endpoint received it (tool-call `arguments` a JSON string): what the ids render. */
const SentMessage = z.looseObject({ role: z.string().min(1), content: z.string().nullable() });

export const TokensRow = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  task_id: z.string().min(1),
  suite: z.string().min(1),
  type: z.string().min(1),
  patient: z.string(),
  reward: z.number().min(0).max(1),
  status: z.string().min(1),
  protocol: z.enum(["text", "tools"]),
  model: z.string().min(1),
  sample: z.int().min(0),
  /** The messages before the first assistant turn (GRPO's `prompt` column). */
  prompt: z.array(jsonValue(SentMessage)).min(1),
  /** The whole conversation as sent to the endpoint (what `dataset validate --tokenizer` renders again). */
  messages: z.array(jsonValue(SentMessage)).min(2),
  tools: jsonValue(z.array(TrlTool)).nullable(),
  prompt_ids: z.array(Id).min(1),
  completion_ids: z.array(Id).min(1),
  logprobs: z.array(z.number()),
  env_mask: z.array(z.int().min(0).max(1)),
}).refine((r) => r.logprobs.length === r.completion_ids.length && r.env_mask.length === r.completion_ids.length, {
  message: "logprobs and env_mask must hold one value per completion id",
  path: ["env_mask"],
});
export type TokensRow = z.infer<typeof TokensRow>;

export const TOKENS_DIR = "tokens";

/** The tokens row of an episode (`trl`: its SFT row, for the shared columns), or why it has none. */
export function toTokensRow(episode: EpisodeRow, trl: TrlRow): TokensRow | { reason: string } {
  const t = trajectoryTokens(episode.turns ?? []);
  if ("reason" in t) return t;
  const first = episode.messages.findIndex((m) => m.role === "assistant");
  return {
    id: trl.id,
    task_id: trl.task_id,
    suite: trl.suite,
    type: trl.type,
    patient: trl.patient,
    reward: trl.reward,
    status: trl.status,
    protocol: trl.protocol,
    model: trl.model,
    sample: trl.sample,
    prompt: episode.messages.slice(0, first),
    messages: episode.messages,
    tools: trl.tools,
    ...t,
  };
}

/** The tokens config as a build writes it: a split at a time through shards.ts, beside the SFT rows. */
export class TokensConfig {
  readonly config: CardConfig = { name: "tokens", folder: TOKENS_DIR, schema: TokensRow, splits: [] };
  /** Kept rows with no token sequence (no captured tokens, or a prompt that does not extend the previous turn), and the first reasons. */
  skipped = 0;
  readonly reasons: string[] = [];
  private writer: SplitWriter | undefined;
  private lengths: number[] = [];

  constructor(
    private readonly dir: string,
    private readonly o: Omit<SplitOptions, "schema">,
  ) {}

  startSplit(name: string): void {
    this.writer = new SplitWriter(this.dir, TOKENS_DIR, name, { ...this.o, schema: TokensRow });
  }

  add(episode: EpisodeRow, trl: TrlRow): void {
    const row = toTokensRow(episode, trl);
    if (!("reason" in row)) {
      this.lengths.push(row.prompt_ids.length + row.completion_ids.length);
      return this.writer!.add(row);
    }
    this.skipped++;
    if (this.reasons.length < 3) this.reasons.push(`${trl.suite}/${trl.task_id} sample ${trl.sample}: ${row.reason}`);
  }

  endSplit(): ManifestFile[] {
    const w = this.writer!.close();
    this.writer = undefined;
    if (w.split.rows) this.config.splits.push({ ...w.split, lengths: this.lengths });
    this.lengths = [];
    return w.files;
  }

  get rows(): number {
    return this.config.splits.reduce((n, s) => n + s.rows, 0);
  }
}

/** What the card says of the tokens config beside its files: its rows, and the kept rows without one. */
export interface TokensCard {
  rows: number;
  skipped: number;
}

/** The card's section on the tokens config. */
export function tokensSection(t: TokensCard): string[] {
  const rows = t.rows;
  return [
    "## Token-level rows (config `tokens`)",
    `${rows.toLocaleString("en-US")} trajectories as the endpoint tokenised and sampled them (\`ehrgym rollout --capture tokens\`: vLLM's \`return_token_ids\` and \`logprobs\`), in the shape TRL's GRPOTrainer \`rollout_func\` returns: \`prompt_ids\` (the first request's prompt), \`completion_ids\` (every assistant turn's sampled ids, its end-of-turn token included, with the environment's tokens between turns taken from the next request's prompt), \`logprobs\` (the sampled tokens' logprobs; 0 for environment tokens) and \`env_mask\` (1 for model tokens, 0 for environment tokens: pass it as \`env_mask\`, which TRL uses as its tool mask). \`prompt\` (the messages before the first assistant turn) and \`messages\` (the conversation as sent, tool-call \`arguments\` as JSON strings), \`tools\`, \`reward\` and the task columns come with them. ${t.skipped ? `${t.skipped.toLocaleString("en-US")} kept trajectories have no token row: a turn without captured tokens, or a prompt that does not extend the previous prompt + completion (a chat template that re-renders earlier turns, e.g. drops their reasoning), where the sampled tokens are not what the next turn was conditioned on.` : "Every kept trajectory has a token row."}`,
    "```python",
    "from datasets import load_dataset",
    `ds = load_dataset("<user>/<name>", "tokens", split="train")`,
    "def rollout_func(prompts, trainer):  # one row per prompt here; sample num_generations rows per task to train",
    "    rows = [by_prompt[json.dumps(p)] for p in prompts]",
    '    return {k: [r[k] for r in rows] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}',
    "```",
  ];
}
