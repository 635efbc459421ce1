// Format tokens (`dataset build --format tokens`): per trajectory, what TRL's GRPOTrainer
// `rollout_func` returns for a sample: `prompt_ids` (the first call's prompt), `completion_ids` (every
// completion, with the environment's tokens between them), `logprobs` (the sampled tokens' logprobs, 0
// for environment tokens) and `env_mask` (1 model token, 0 environment token; TRL reads it as the
// tool mask). Its own config (`tokens`), JSONL files under tokens/, features declared in the card.
import { z } from "zod";
import { trajectoryTokens, type EpisodeRow } from "../rollout/index.ts";
import { HashedFile, shardName } from "./files.ts";
import { hfFeature } from "./features.ts";
import type { ManifestFile } from "./manifest.ts";
import { jsonValue, rowColumns, TrlTool, type Column, type TrlRow } from "./schema.ts";

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

function cardFeature(name: string, c: Column): Record<string, unknown> {
  return c.kind === "list" ? { name, list: c.item.kind } : { name, dtype: c.kind };
}
const columns = () => rowColumns(TokensRow as unknown as z.ZodObject);
export const tokensHfFeatures = () => Object.fromEntries(columns().map(([name, c]) => [name, hfFeature(c)]));
export const tokensCardFeatures = () => columns().map(([name, c]) => cardFeature(name, c));

/** Per split: the shards written, and the rows left out with their first reasons. */
export interface TokensSplit {
  name: string;
  rows: number;
  bytes: number;
  files: string[];
}
export interface TokensCard {
  splits: TokensSplit[];
  /** Rows with no token sequence (no captured tokens, or a prompt that does not extend the previous turn). */
  skipped: number;
  reasons: string[];
}

/** Writes one split's tokens rows as JSONL shards of at most `shardRows` rows, as they are added. */
export class TokensWriter {
  private file: HashedFile | undefined;
  private shard = 0;
  private inShard = 0;
  readonly split: TokensSplit;
  readonly done: ManifestFile[] = [];

  constructor(private readonly dir: string, name: string, private readonly total: number, private readonly shardRows: number, private readonly card: TokensCard) {
    this.split = { name, rows: 0, bytes: 0, files: [] };
  }

  add(episode: EpisodeRow, trl: TrlRow): void {
    const row = toTokensRow(episode, trl);
    if ("reason" in row) {
      this.card.skipped++;
      if (this.card.reasons.length < 3) this.card.reasons.push(`${trl.suite}/${trl.task_id} sample ${trl.sample}: ${row.reason}`);
      return;
    }
    if (!this.file) {
      // Shard names count the split's kept rows, so the last shard's name is known when the first opens.
      const name = shardName(this.split.name, this.shard, Math.max(1, Math.ceil(this.total / this.shardRows)));
      this.file = new HashedFile(`${this.dir}/${TOKENS_DIR}/${name}.jsonl`, `${TOKENS_DIR}/${name}.jsonl`);
    }
    this.file.write(`${JSON.stringify(row)}\n`, 1);
    this.split.rows++;
    if (++this.inShard === this.shardRows) this.closeShard();
  }

  private closeShard(): void {
    if (!this.file) return;
    const entry = this.file.close();
    this.done.push(entry);
    this.split.files.push(entry.path);
    this.split.bytes += entry.bytes;
    this.file = undefined;
    this.shard++;
    this.inShard = 0;
  }

  close(): ManifestFile[] {
    this.closeShard();
    if (this.split.rows) this.card.splits.push(this.split);
    return this.done;
  }
}

/** The card's `tokens` config, its dataset_info entry, and its section. */
export function tokensCardParts(t: TokensCard) {
  const config = { config_name: "tokens", data_files: t.splits.map((s) => ({ split: s.name, path: `${TOKENS_DIR}/${s.name}-*.jsonl` })) };
  const bytes = t.splits.reduce((n, s) => n + s.bytes, 0);
  const info = {
    config_name: "tokens",
    features: tokensCardFeatures(),
    splits: t.splits.map((s) => ({ name: s.name, num_bytes: s.bytes, num_examples: s.rows })),
    download_size: bytes,
    dataset_size: bytes,
  };
  const rows = t.splits.reduce((n, s) => n + s.rows, 0);
  const section = [
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
  return { config, info, section };
}
