// The dataset card (README.md): YAML header for the Hub, then what the data is, where every row
// came from, counts, decontamination, an example and how to load it. Nothing in it depends on
// input file names or build time, so the same rows give the same card.
import { stringify } from "yaml";
import type { z } from "zod";
import { cardFeatures } from "./features.ts";
import type { HeldOutRecord } from "./exclude.ts";
import { renderChat } from "./render.ts";
import type { SourceInfo } from "./scan.ts";
import type { TrlRow } from "./schema.ts";
import type { SplitFiles } from "./shards.ts";
import { tokensSection, type TokensCard } from "./tokens.ts";

export type CardSplit = SplitFiles;

/** A config beside the default (SFT) one: a preference format or tokens, its files in the folder of its name. */
export interface CardConfig {
  name: string;
  folder: string;
  schema: z.ZodObject;
  splits: CardSplit[];
}

export interface CardInput {
  name: string;
  license: string;
  ehrgymVersion: string;
  splits: CardSplit[];
  /** [suite, type, branch, per-split counts in split order] */
  counts: { suite: string; type: string; branch: string; perSplit: number[] }[];
  sources: SourceInfo[];
  /** Name the endpoints' hosts (--show-endpoint); else only the endpoint kind. */
  showEndpoint: boolean;
  passByModel: [string, { n: number; correct: number }][];
  stats: Record<string, number>;
  /** The build's options as manifest.json records them. */
  options: { keep: string; min_reward: number | null; dedupe: boolean; max_per_task: number | null; seed: number; splits: { name: string; fraction: number }[]; shard_rows: number; reasoning?: string; pairs_per_task?: number; max_tokens?: number };
  /** The tokenizer rows were measured with (--tokenizer): lengths in its tokens; none: in characters. */
  tokenizer?: { sha256: string; size: number };
  /** The chat template rows were rendered with to be measured (--chat-template); none: ChatML. */
  chatTemplate?: { sha256: string };
  heldOut: HeldOutRecord;
  excluded: { rows: number; patients: number; byKind: Record<"patient" | "task" | "instruction", number> };
  noPatient: number;
  /** The rows' `patient_source` values: "synthetic (...)", "population FILE", "data DIR", "not recorded". */
  patientSources: string[];
  seeds: number[];
  example?: TrlRow;
  tokens?: TokensCard;
  /** Configs beside the default one (formats dpo, kto, tokens), in the card's order. */
  configs?: CardConfig[];
}

const SIZE_CATEGORIES: [below: number, name: string][] = [[1e3, "n<1K"], [1e4, "1K<n<10K"], [1e5, "10K<n<100K"], [1e6, "100K<n<1M"], [1e7, "1M<n<10M"]];
export const sizeCategory = (n: number) => SIZE_CATEGORIES.find(([below]) => n < below)?.[1] ?? "10M<n<100M";

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : "n/a");
const num = (n: number) => n.toLocaleString("en-US");
const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "not recorded");
const uniq = <T>(xs: T[]) => [...new Set(xs)].sort();

function table(head: string[], rows: (string | number)[][]): string {
  return [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.map((c) => (typeof c === "number" ? num(c) : c)).join(" | ")} |`)].join("\n");
}

const bytesOf = (s: CardSplit) => s.arrow?.bytes ?? s.jsonl.bytes;

export function cardHeader(c: CardInput): Record<string, unknown> {
  const total = c.splits.reduce((n, s) => n + s.rows, 0);
  // `datasets` loads a repository with one builder, chosen from the default config's files, so every
  // config is in the default's file format: the Arrow files when built (exact: its JSON loader
  // re-encodes Json features with ujson, which rounds floats); the JSONL files beside them hold the
  // same rows for readers of plain JSON lines.
  //
  // The files are named one by one, never by a glob: `datasets` keys its cache of a local folder on the
  // card's configs and dataset_info, so with globs a rebuild whose files keep their sizes (rows
  // differing in same-length values) would be read from the previous build's cache. Shard names
  // carry a hash of their content (shards.ts), so new rows always mean a new card.
  const arrow = c.splits.every((s) => s.arrow);
  const extra = c.configs ?? [];
  const dataFiles = (splits: CardSplit[]) => splits.map((s) => ({ split: s.name, path: arrow ? s.arrow!.files : s.jsonl.files }));
  const configs: Record<string, unknown>[] = [
    { config_name: "default", default: true, data_files: dataFiles(c.splits) },
    ...extra.map((x) => ({ config_name: x.name, data_files: dataFiles(x.splits) })),
  ];
  const info = (features: unknown, splits: CardSplit[]) => ({
    features,
    splits: splits.map((s) => ({ name: s.name, num_bytes: bytesOf(s), num_examples: s.rows })),
    download_size: splits.reduce((n, s) => n + bytesOf(s), 0),
    dataset_size: splits.reduce((n, s) => n + bytesOf(s), 0),
  });
  const tags = ["medical", "fhir", "ehr", "agents", "tool-calling", "sft", ...extra.flatMap((x) => (x.name === "tokens" ? [] : [x.name])), "medagentbench"];
  return {
    license: c.license,
    language: ["en"],
    task_categories: ["text-generation"],
    tags,
    size_categories: [sizeCategory(total)],
    pretty_name: "Clinical EHR agent trajectories (ehrgym, MedAgentBench tasks)",
    configs,
    // one config: its info as a mapping; several: a list naming each config, as the Hub writes it
    dataset_info: withConfigs(
      extra.map((x) => ({ config_name: x.name, ...info(cardFeatures(x.schema), x.splits) })),
      info(cardFeatures(), c.splits),
    ),
  };
}

/** One config: its dataset_info as is; more: a list with each config's name, as the Hub writes it. */
const withConfigs = (more: Record<string, unknown>[] | undefined, main: Record<string, unknown>) => (more?.length ? [{ config_name: "default", ...main }, ...more] : main);

/** The default config's dataset_info, whichever form the card has. */
export function defaultInfo<T>(info: T | (T & { config_name?: string })[] | undefined): T | undefined {
  return Array.isArray(info) ? info.find((i) => (i.config_name ?? "default") === "default") : info;
}

export function renderCard(c: CardInput): string {
  const total = c.splits.reduce((n, s) => n + s.rows, 0);
  const models = uniq(c.sources.map((s) => s.model));
  const kinds = uniq(c.sources.map((s) => (c.showEndpoint && s.base_url_host ? `${s.kind} (${s.base_url_host})` : s.kind)));
  const sampling = uniq(c.sources.map((s) => (s.sampling && Object.keys(s.sampling).length ? JSON.stringify(s.sampling) : "endpoint defaults")));
  const protocols = uniq(c.sources.map((s) => s.protocol));
  const versions = uniq(c.sources.map((s) => s.ehrgym_version ?? "not recorded"));
  const suites = uniq(c.counts.map((r) => r.suite));
  const o = c.options;
  const splitNames = c.splits.map((s) => s.name);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

  const byKey = (key: (r: CardInput["counts"][number]) => string) => {
    const m = new Map<string, number[]>();
    for (const r of c.counts) {
      const acc = m.get(key(r)) ?? splitNames.map(() => 0);
      r.perSplit.forEach((n, i) => (acc[i]! += n));
      m.set(key(r), acc);
    }
    return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, ...v, sum(v)]);
  };

  const ex = c.excluded;
  const decontamination = c.heldOut.files.length
    ? `Rows that touch these evaluation files were removed: rows of their patients (the row's MRN, or any MRN of a held-out patient in its transcript), rows of their tasks (same suite and task id), and rows whose prompt holds one of their instructions (lookups of a missing patient have no MRN: only the task or its text catches them):\n\n${table(
        ["file", "sha256", "patients", "tasks"],
        c.heldOut.files.map((e) => [`\`${e.file}\``, `\`${e.sha256.slice(0, 16)}…\``, e.patients, e.tasks]),
      )}\n\nThis removed **${num(ex.rows)} rows**: ${num(ex.byKind.patient)} for a held-out patient (${num(ex.patients)} distinct), ${num(ex.byKind.task)} for an evaluation task, ${num(ex.byKind.instruction)} for an evaluation instruction. \`manifest.json\` keeps the held-out patients and tasks as sha256 hashes, and \`ehrgym dataset validate\` checks every row against them (with \`--exclude-mrns-from FILE\`, against the files' instructions too).`
    : "No evaluation file was given to `--exclude-mrns-from`: nothing was removed for decontamination. Do not evaluate on patients or tasks that appear here.";

  const keepRule =
    o.keep === "clean"
      ? "Only trajectories the grader marked correct (reward 1) **and whose every assistant turn is a valid action** are kept (`--keep clean`): a trajectory that recovered from an invalid turn (a tool call whose arguments are not a JSON object, an unknown tool, a text turn that is not GET/POST/FINISH, a POST whose payload is not JSON, a FINISH whose answer is not JSON, e.g. text after `FINISH([...])`, which the v1 graders' `json.loads` refuses) is left out, so no row teaches a mistake."
      : o.keep === "correct"
        ? "Trajectories the grader marked correct (reward 1) are kept (`--keep correct`), including ones that recovered from an invalid assistant turn; in the openai format such turns carry `weight: 0`, and in the other formats they are kept as the model wrote them (tool-call `arguments` then a string): mask them if you train on those rows."
        : "Trajectories of every reward are kept (`--keep all`, reward column), e.g. for DPO/KTO pairs; the openai format holds only lines with a turn to train on (correct trajectories' valid turns carry `weight: 1`, every other turn `weight: 0`).";
  const synthetic = c.patientSources.every((p) => p.startsWith("synthetic"));
  const patients = synthetic
    ? "The patients are synthetic (ehrgym's seeded EHR generator: " + c.patientSources.join("; ") + "): no real patient data."
    : `The patients came from: ${c.patientSources.join("; ")}. Rows from a population file or a data folder hold whatever that population holds: check its licence and whether it is real patient data before you publish.`;

  const reasoningRule =
    o.reasoning === "keep"
      ? "Reasoning: kept (`--reasoning keep`). An assistant turn whose model reasoned before acting carries the reasoning in `reasoning_content`, apart from `content` (the action), where reasoning chat templates read it (Qwen3's renders it as a leading `<think>` block; TRL's `qwen3_training` template on every assistant turn). Templates that know no `reasoning_content` ignore it."
      : "Reasoning: dropped (`--reasoning drop`, the default). Rows hold each assistant turn's action only; whatever the teacher reasoned before acting is not in the data.";
  const loss = "Only assistant turns should carry loss: TRL's `assistant_only_loss=True` (needs a chat template with generation markers), `weight` in the openai format.";
  const body = [
    `# ${c.name}`,
    `Supervised fine-tuning data for clinical EHR agents: ${num(total)} agent trajectories on MedAgentBench-style tasks (FHIR R4), each a whole conversation with the environment's replies and the grader's reward, made with ehrgym from rollout rows. ${keepRule}`,
    `## How it was made`,
    table(
      ["", ""],
      [
        ["teacher model", list(models)],
        ["endpoint kind", list(kinds)],
        ["sampling", list(sampling)],
        ["protocol", list(protocols)],
        ["patients", list(c.patientSources)],
        ["ehrgym version (rows)", list(versions)],
        ["ehrgym version (build)", c.ehrgymVersion],
        ["task suites", list(suites)],
        ["task generator seed", c.seeds.length ? c.seeds.join(", ") : "not recorded in the rows (see the rollout's .meta.json)"],
        ["grader version", `the graders of the ehrgym version that wrote each row (${list(versions)})`],
        ["build", `keep ${o.keep}${o.min_reward !== null ? `, min reward ${o.min_reward}` : ""}${o.dedupe ? ", dedupe" : ""}${o.max_per_task !== null ? `, at most ${o.max_per_task} per task` : ""}; splits ${splitNames.map((n) => `${n} ${o.splits.find((sp) => sp.name === n)?.fraction}`).join(" / ")} by patient, seed ${o.seed}; shards of ${num(o.shard_rows)} rows`],
      ],
    ),
    `Rows: ${num(c.stats.rows_read ?? 0)} read, ${num(c.stats.invalid ?? 0)} not valid episode rows (skipped), ${num(c.stats.filtered ?? 0)} filtered by reward, ${num(c.stats.unclean ?? 0)} correct but with an invalid action (left out by --keep clean), ${num(c.excluded.rows)} removed for decontamination, ${num(c.stats.duplicates ?? 0)} duplicates of another row's id, ${num(c.stats.exact_duplicates ?? 0)} exact duplicates of another row's conversation (messages and tools; another sample that played out identically), ${num(c.stats.deduped ?? 0)} dropped by --dedupe, ${num(c.stats.capped ?? 0)} over the per-task cap${o.max_tokens !== undefined ? `, ${num(c.stats.too_long ?? 0)} longer than ${num(o.max_tokens)} tokens (--max-tokens)` : ""}; **${num(total)} kept**${c.stats.openai_untrainable ? ` (${num(c.stats.openai_untrainable)} of them have no turn to train on and are not in the openai format)` : ""}. Ids are a hash of (suite, task_id, sample, source run), where the source run is the row's policy kind, model, protocol and sampling.`,
    `### Teacher pass rate on the generated tasks`,
    table(["model", "episodes", "correct", "pass rate"], c.passByModel.map(([m, p]) => [m, p.n, p.correct, pct(p.correct, p.n)])),
    `## Counts`,
    table(["split", "rows", "files"], c.splits.map((s) => [s.name, s.rows, [...s.jsonl.files, ...(s.arrow?.files ?? []), ...(s.openai ? [s.openai] : [])].map((f) => `\`${f}\``).join(" ")])),
    `Splits are patient-disjoint: all rows of a patient (MRN) are in one split.${c.noPatient ? ` ${num(c.noPatient)} rows carry no MRN (rows written before rows had one, or lookups of a missing patient): they are split by task.` : ""}`,
    ...lengthSection(c),
    `### Per suite`,
    table(["suite", ...splitNames, "total"], byKey((r) => r.suite)),
    `### Per type`,
    table(["suite/type", ...splitNames, "total"], byKey((r) => `${r.suite}/${r.type}`)),
    `### Per grading branch`,
    table(["suite/type/branch", ...splitNames, "total"], byKey((r) => `${r.suite}/${r.type}/${r.branch || "-"}`)),
    `## Decontamination`,
    decontamination,
    `## Row`,
    "Columns: `messages` (each message a JSON object with only the keys it has: `role`, `content`, and `tool_calls` / `tool_call_id` / `name` where present; no `null` placeholders), `tools` (the offered tool list, null in the text protocol), `id`, `task_id`, `suite`, `type`, `branch`, `kind`, `patient` (MRN), `patient_source` (where the patients came from), `reward`, `partial_credit`, `status`, `protocol`, `model`, `rounds`, `sample`, `prompt_tokens`, `completion_tokens`. " + loss,
    "Representation: `messages` and `tools` are `datasets` `Json` features (Arrow `arrow.json` text), so `load_dataset` gives each message as a plain dict and each tool call's `arguments` as a dict, the form transformers' chat templates take: Qwen2.5, Qwen3, Llama 3.1 and TRL's templates print them as a JSON object, the others shipped in `trl` parameter by parameter in their own syntax, never as a quoted string (tested with every template in `trl` that renders tool calls; Llama 3.1/3.2 take one tool call per turn and say so on rows whose turns call several; DeepSeek-V3's original template joins `arguments` as text: use TRL's `deepseekv3_training` template, which applies `tojson`, ; tool-call turns without text carry `content: \"\"`, not null: with null, the DeepSeek-V3 (`deepseekv3_training`), LFM2 and Phi-3 templates in `trl` fail to render the row; Phi-3's and the R1-distill templates have no tool calling and leave the calls out, and Cohere's refuse the `tool` role either way). `datasets` decodes Json features with pandas' ujson, which can change a float in its last binary digit (1.36 -> 1.3599999999999999); `data/*.jsonl` holds the exact values. The openai format keeps OpenAI's own form: `arguments` as JSON strings.",
    reasoningRule,
    ...(c.example ? ["### Example (first training row)", "```text", renderChat(c.example, 400), "```"] : []),
    ...preferenceSection(c),
    `## How to load`,
    "```python",
    "from datasets import load_dataset",
    `ds = load_dataset("<user>/${c.name}")   # the Arrow files (the one config); data/*.jsonl hold the same rows as JSON lines`,
    "```",
    "TRL (rows are conversational with `tools`, as `SFTTrainer` reads them):",
    "```python",
    "from trl import SFTConfig, SFTTrainer",
    `ds = load_dataset("<user>/${c.name}", split="train")`,
    'trainer = SFTTrainer(model="Qwen/Qwen2.5-7B-Instruct", train_dataset=ds, args=SFTConfig(assistant_only_loss=True))',
    "trainer.train()",
    "```",
    "OpenAI fine-tuning: upload `openai/train.jsonl` (and `openai/validation.jsonl` when present) as is: `openai api files.create -f openai/train.jsonl -p fine-tune`.",
    ...(c.tokens ? tokensSection(c.tokens) : []),
    `## Licence`,
    `${c.license}. ${patients}`,
  ];
  return `---\n${stringify(cardHeader(c), { lineWidth: 0 })}---\n\n${body.join("\n\n")}\n`;
}

const FAILED = "failed trajectories of the same task prompt (reward 0, ended by the model: a wrong answer, an invalid action, the round or context limit; never an endpoint or environment error)";

/** The card's section on the dpo and kto configs: how rows were chosen and paired, counts, loading. */
function preferenceSection(c: CardInput): string[] {
  const configs = (c.configs ?? []).filter((x) => x.name === "dpo" || x.name === "kto");
  if (!configs.length) return [];
  const st = c.stats;
  const p = c.options.pairs_per_task ?? 0;
  const rule = c.options.keep === "all" ? "the correct (reward 1) trajectories read" : `the correct trajectories the rule above keeps (\`--keep ${c.options.keep}\`, before \`--max-per-task\`)`;
  const out = [
    "## Preference configs",
    `Built from ${rule}, ${num(st.pref_correct ?? 0)} episodes, and the ${FAILED}, ${num(st.pref_failed ?? 0)} episodes after the same duplicate rules${st.failed_excluded ? ` (${num(st.failed_excluded)} failed episodes of held-out patients or tasks were removed, as above)` : ""}. A task prompt is a task with the same first messages and tool list (one task in the text and the tool protocol is two prompts). ${num(st.pairable_prompts ?? 0)} task prompts have both correct and failed episodes, ${num(st.only_correct_prompts ?? 0)} only correct ones, ${num(st.only_failed_prompts ?? 0)} only failed ones. Splits: every patient is in the split the default config puts it in (patients found only here are placed the same seeded way), so no patient crosses splits in any config.`,
  ];
  if (configs.some((x) => x.name === "dpo"))
    out.push(
      `**\`dpo\`** (${num(st.dpo_pairs ?? 0)} pairs): TRL \`DPOTrainer\`'s conversational preference rows, \`prompt\`, \`chosen\`, \`rejected\` (lists of messages) and \`tools\`. Per task prompt, the correct episodes and the failed ones are each sorted by (sample, id); pair k joins correct k mod C with failed k mod F, for k below min(${p}, max(C, F)) (\`--pairs-per-task ${p}\`): every episode is used once before any is used twice, two episodes with the same assistant turns never pair, ${num(st.pairs_capped ?? 0)} pairs were left out by the cap. \`prompt\` holds the messages both trajectories share, up to the first assistant turn where they part; \`chosen\` and \`rejected\` run from there to each trajectory's last assistant turn (the environment's reply to the final call is left out). The environment's replies between the model's turns are part of the completions, and DPOTrainer sums log-probabilities over every completion token, theirs included. \`chosen_id\` and \`rejected_id\` are the episodes' ids (their rows' \`id\` in the default config, when kept there).`,
    );
  if (configs.some((x) => x.name === "kto"))
    out.push(
      `**\`kto\`** (${num(st.kto_desirable ?? 0)} desirable, ${num(st.kto_undesirable ?? 0)} undesirable): TRL \`KTOTrainer\`'s unpaired conversational rows, \`prompt\` (the messages before the first assistant turn), \`completion\` (to the last assistant turn), boolean \`label\` (true: reward 1) and \`tools\`: per task prompt the first ${p} correct and the first ${p} failed episodes by (sample, id) (${num(st.kto_capped ?? 0)} left out by the cap). TRL recommends weighting the two kinds so that desirable_weight x desirable rows / (undesirable_weight x undesirable rows) lies between 1 and 4/3 (\`KTOConfig(desirable_weight=..., undesirable_weight=...)\`).`,
    );
  out.push(
    table(["config", "split", "rows", "files"], configs.flatMap((x) => x.splits.map((s) => [x.name, s.name, s.rows, [...s.jsonl.files, ...(s.arrow?.files ?? [])].map((f) => `\`${f}\``).join(" ")]))),
    "```python",
    "from datasets import load_dataset",
    ...configs.map((x) => `${x.name} = load_dataset("<user>/${c.name}", "${x.name}", split="train")`),
    ...(configs.some((x) => x.name === "dpo") ? ["from trl import DPOConfig, DPOTrainer", 'DPOTrainer(model="Qwen/Qwen2.5-7B-Instruct", args=DPOConfig(), train_dataset=dpo).train()'] : []),
    ...(configs.some((x) => x.name === "kto") ? ["from trl import KTOConfig, KTOTrainer", 'KTOTrainer(model="Qwen/Qwen2.5-7B-Instruct", args=KTOConfig(), train_dataset=kto).train()'] : []),
    "```",
  );
  return out;
}

/** The nearest-rank percentile `p` (0-100] of ascending `sorted` values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** What each config's length figure measures. */
const MEASURED: Record<string, string> = {
  default: "the conversation",
  dpo: "the longer of the pair's two trajectories",
  kto: "the trajectory",
  tokens: "prompt_ids + completion_ids (sampled ids)",
};

/** The card's length figures: p50/p90/p99/max per config and split, and what --max-tokens dropped. */
function lengthSection(c: CardInput): string[] {
  const o = c.options;
  const unit = c.tokenizer ? "tokens" : "characters";
  const rows: (string | number)[][] = [];
  const add = (config: string, split: string, lengths: readonly number[] | undefined, u: string) => {
    if (!lengths?.length) return;
    const sorted = [...lengths].sort((a, b) => a - b);
    rows.push([config, split, sorted.length, `${MEASURED[config] ?? "the row"}, ${u}`, percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99), sorted[sorted.length - 1]!]);
  };
  for (const s of c.splits) add("default", s.name, s.lengths, unit);
  if (c.splits.length > 1) add("default", "all", c.splits.flatMap((s) => s.lengths ?? []), unit);
  for (const x of c.configs ?? []) for (const s of x.splits) add(x.name, s.name, s.lengths, x.name === "tokens" ? "tokens" : unit);
  if (!rows.length) return [];
  const how = c.chatTemplate
    ? `rendered with the chat template given to \`--chat-template\` (sha256 \`${c.chatTemplate.sha256.slice(0, 16)}…\`), given the conversation as vLLM gives it (tool-call arguments as objects)`
    : "rendered as ChatML (the tool list as a system block, then each message; tool calls as `<tool_call>` blocks, kept reasoning as a `<think>` block), which other chat templates change by a few tokens a message (`--chat-template` renders with the model's own)";
  const measure = c.tokenizer
    ? `Lengths are counted in tokens of the tokenizer given to \`--tokenizer\` (a tokenizer.json with ${num(c.tokenizer.size)} ids, sha256 \`${c.tokenizer.sha256.slice(0, 16)}…\`) on each row's messages and tools ${how}.`
    : `No tokenizer was given (\`--tokenizer tokenizer.json\`): lengths are characters of each row's messages and tools ${how}; pass the model's tokenizer.json for token counts, and \`--max-tokens N\` to drop longer rows.`;
  const limit =
    o.max_tokens !== undefined
      ? ` Every trajectory a row of any config is made from is at most ${num(o.max_tokens)} tokens: \`--max-tokens ${o.max_tokens}\` dropped ${num(c.stats.too_long ?? 0)} rows${c.stats.failed_too_long ? ` and ${num(c.stats.failed_too_long)} failed episodes of the preference side` : ""}.`
      : c.tokenizer
        ? " No `--max-tokens` limit was set."
        : "";
  const prefs = (c.configs ?? []).some((x) => x.name === "dpo" || x.name === "kto") ? " The dpo and kto figures measure the whole trajectories their rows are cut from (the environment's last reply included): an upper bound of a row's prompt + completion." : "";
  const tokens = (c.configs ?? []).some((x) => x.name === "tokens") ? " The tokens config counts the ids the model was given and sampled, exactly." : "";
  return [
    "### Length",
    `${measure}${limit}${prefs}${tokens} Percentiles are nearest-rank.`,
    table(["config", "split", "rows", "measured", "p50", "p90", "p99", "max"], rows),
  ];
}
