// `dataset build`: pass 1 (scan.ts) reads every input line once and keeps a small entry per row
// that stays; the plan decides splits from the entries alone; pass 2 reads the kept rows back by
// offset, in output order, and writes every format as it goes. One thread, streaming: memory holds
// the entries and one Arrow batch. Everything lands in a temp folder renamed over --out at the end.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { z } from "zod";
import { EHRGYM_VERSION, EpisodeRow } from "../rollout/index.ts";
import { renderCard, type CardConfig, type CardSplit } from "./card.ts";
import type { Keep } from "./checks.ts";
import { toOpenAiRecord, toTrlRow, type ReasoningRule } from "./convert.ts";
import { HeldOut, heldOutRecord, readExcludeFile, sha256 } from "./exclude.ts";
import { HashedFile } from "./files.ts";
import { DatasetError, MANIFEST, type Manifest, type ManifestFile } from "./manifest.ts";
import { makePlan, type SplitSpec } from "./plan.ts";
import { PREFERENCE_FORMATS, writePreferenceConfigs, type PreferenceFormat } from "./preference-configs.ts";
import { scan, type Entry } from "./scan.ts";
import { TrlRow } from "./schema.ts";
import { writeSplit } from "./shards.ts";
import type { ChatTemplate } from "./chat-template.ts";
import type { TextTokenizer } from "./tokenizer.ts";
import { TokensConfig } from "./tokens.ts";
import { writeFolderAtomic } from "../env/util/index.ts";

export type Format = "trl" | "openai" | "arrow" | "tokens" | PreferenceFormat;

export interface BuildOptions {
  inputs: string[];
  out: string;
  keep: Keep;
  minReward?: number;
  maxPerTask?: number;
  /** Formats dpo and kto: at most this many pairs (dpo), correct and failed rows (kto) per task prompt (default 4). */
  pairsPerTask?: number;
  dedupe: boolean;
  splits: SplitSpec[];
  seed: number;
  excludeMrnsFrom: string[];
  formats: Format[];
  /** Assistant turns' reasoning: kept as `reasoning_content`, or dropped (the default). */
  reasoning?: ReasoningRule;
  /** Rows are measured in its tokens (the card's length figures); else in characters. */
  tokenizer?: TextTokenizer;
  /** Rows are rendered with it to be measured (the model's chat template); else as ChatML. */
  chatTemplate?: ChatTemplate;
  /** Drops every row whose conversation is longer than this many tokens of `tokenizer` (which it needs). */
  maxTokens?: number;
  name: string;
  license: string;
  shardRows: number;
  force: boolean;
  /** Name the teacher endpoints' hosts in the card (off: they may be private). */
  showEndpoint?: boolean;
  log?: (line: string) => void;
  /** Stops the build: it throws the signal's reason, and nothing is left behind (no --out change, no temp folder). */
  signal?: AbortSignal;
  /** Pass 1 counts the input's bytes read, pass 2 the rows written, each against its total. */
  progress?: (stage: BuildStage, done: number, total: number) => void;
}

export type BuildStage = "read" | "write";

const RolloutMeta = z.looseObject({ seed: z.number().int().nullable().optional() });

/** Generator seeds from `<input>.meta.json` files beside the inputs, when the rollout wrote them. */
function metaSeeds(inputs: string[]): number[] {
  const seeds = new Set<number>();
  for (const path of inputs) {
    const meta = `${path}.meta.json`;
    if (!existsSync(meta)) continue;
    try {
      const parsed = RolloutMeta.safeParse(JSON.parse(readFileSync(meta, "utf8")));
      if (parsed.success && typeof parsed.data.seed === "number") seeds.add(parsed.data.seed);
    } catch {
      // a meta file is a courtesy: an unreadable one leaves the seed "not recorded"
    }
  }
  return [...seeds].sort((a, b) => a - b);
}

const real = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));

/** Refuses an --out that is an input or holds one (replacing it would delete the input), or is a file. */
function checkOut(out: string, o: BuildOptions): void {
  if (existsSync(out) && !statSync(out).isDirectory()) throw new DatasetError(`--out ${o.out} is a file, not a dataset folder`);
  const outReal = real(out);
  for (const input of [...o.inputs, ...o.excludeMrnsFrom]) {
    const inReal = real(input);
    if (inReal === outReal || inReal.startsWith(outReal + sep)) throw new DatasetError(`--out ${o.out} holds the input ${input}: replacing it would delete the input; choose another --out`);
  }
  if (existsSync(out) && !o.force) throw new DatasetError(`--out ${o.out} exists; pass --force to replace it`);
}

export async function buildDataset(o: BuildOptions) {
  const log = o.log ?? (() => {});
  const out = resolve(o.out);
  if (o.maxTokens !== undefined && !o.tokenizer) throw new DatasetError(`--max-tokens ${o.maxTokens}: give --tokenizer tokenizer.json, the tokenizer to count tokens with`);
  checkOut(out, o);
  const sources = o.excludeMrnsFrom.map(readExcludeFile);
  mkdirSync(dirname(out), { recursive: true });
  const result = await writeFolderAtomic(out, (tmp) => buildInto(tmp, o, sources, log), (name, pid) => log(`removed ${name}, left by a build that was stopped (process ${pid} is gone)`));
  return { ...result, out };
}
export type BuildResult = Awaited<ReturnType<typeof buildDataset>>;

/** Reads rows back by the offsets pass 1 found. */
class RowReader {
  private readonly fds = new Map<number, number>();
  constructor(
    private readonly paths: readonly string[],
    private readonly reasoning: ReasoningRule = "drop",
  ) {}

  text(e: Pick<Entry, "file" | "off" | "len">): string {
    let fd = this.fds.get(e.file);
    if (fd === undefined) this.fds.set(e.file, (fd = openSync(this.paths[e.file]!, "r")));
    const buf = Buffer.allocUnsafe(e.len);
    // A regular file gives every byte asked for, short of its end.
    if (readSync(fd, buf, 0, e.len, e.off) < e.len) throw new DatasetError(`${this.paths[e.file]} is shorter than when it was read (changed during the build?); run it again`);
    return buf.toString("utf8");
  }

  row(e: Pick<Entry, "file" | "off" | "len">): TrlRow {
    return toTrlRow(this.episode(e, false), this.reasoning);
  }

  /**
   * The episode of a row pass 1 validated (the same bytes: the inputs' sizes and times are checked at
   * the end). Its `turns` are not validated again: with --capture tokens they hold every call's token
   * ids and logprobs, most of a row, and checking each number again was most of a build's time. They
   * are left out unless asked for (`turns`: the tokens format), else kept as pass 1 checked them.
   */
  episode(e: Pick<Entry, "file" | "off" | "len">, turns = true): EpisodeRow {
    const { turns: calls, ...rest } = JSON.parse(this.text(e)) as { turns?: EpisodeRow["turns"] };
    const episode = EpisodeRow.parse(rest);
    return turns && calls ? { ...episode, turns: calls } : episode;
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
  }
}

async function buildInto(dir: string, o: BuildOptions, sources: ReturnType<typeof readExcludeFile>[], log: (line: string) => void) {
  const stamps = o.inputs.map((p) => statSync(p)).map((s) => ({ size: s.size, mtimeMs: s.mtimeMs }));
  const preferences = o.formats.filter((f): f is PreferenceFormat => (PREFERENCE_FORMATS as readonly string[]).includes(f));
  const filter = {
    keep: o.keep,
    ...(o.minReward !== undefined ? { minReward: o.minReward } : {}),
    dedupe: o.dedupe,
    heldOut: new HeldOut(sources),
    preferences: preferences.length > 0,
    reasoning: o.reasoning ?? "drop",
    ...(o.tokenizer ? { tokenizer: o.tokenizer } : {}),
    ...(o.chatTemplate ? { chatTemplate: o.chatTemplate } : {}),
    ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
  };
  const s = await scan(o.inputs, filter, o.progress && ((done, total) => o.progress!("read", done, total)), o.signal);
  for (const line of s.badExamples) log(`skipped ${line}`);
  if (s.bad > s.badExamples.length) log(`skipped ${s.bad - s.badExamples.length} more rows that are not valid episode rows`);
  const reader = new RowReader(o.inputs, o.reasoning);
  try {
    const content = (e: Entry) => Buffer.from(JSON.stringify(reader.row(e)));
    const plan = makePlan(s.entries, { dedupe: o.dedupe, ...(o.maxPerTask !== undefined ? { maxPerTask: o.maxPerTask } : {}), splits: o.splits, seed: o.seed }, content);
    const kept = plan.splits.reduce((n, sp) => n + sp.entries.length, 0);
    if (kept === 0) {
      const dropped = [
        s.filtered ? `--keep ${o.keep}${o.minReward !== undefined ? `/--min-reward ${o.minReward}` : ""} (${s.filtered} not correct)` : "",
        s.unclean ? `--keep clean (${s.unclean} correct rows with an invalid action)` : "",
        s.excluded ? `--exclude-mrns-from (${s.excluded} rows of held-out patients or tasks)` : "",
        s.tooLong ? `--max-tokens ${o.maxTokens} (${s.tooLong} rows longer)` : "",
      ].filter(Boolean);
      const why =
        s.valid === 0
          ? `no valid episode rows in the input (${s.bad} rows failed the schema${s.badExamples[0] ? `, first: ${s.badExamples[0]}` : ""})`
          : s.entries.length === 0
            ? `${s.valid} valid rows, but none passed ${dropped.join(" and ")}`
            : "every row was dropped by --dedupe/--max-per-task";
      throw new DatasetError(`no rows kept: ${why}`);
    }
    for (const split of plan.splits) if (!split.entries.length) log(`split ${split.name} is empty (too few patients for its fraction): left out`);

    const files: ManifestFile[] = [];
    const cardSplits: CardSplit[] = [];
    let openaiSkipped = 0;
    let example: TrlRow | undefined;
    let written = 0;
    const tokens = o.formats.includes("tokens") ? new TokensConfig(dir, { arrow: o.formats.includes("arrow"), shardRows: o.shardRows }) : undefined;
    let rowsOut = 0;
    // Writing is synchronous: let a signal handler run now and then.
    const checkStop = async () => {
      if (o.signal && ++rowsOut % 64 === 0) {
        await new Promise(setImmediate);
        o.signal.throwIfAborted();
      }
    };
    const step = async () => {
      o.progress?.("write", ++written, kept);
      await checkStop();
    };
    for (const sp of plan.splits) {
      if (!sp.entries.length) continue;
      const openai = o.formats.includes("openai") ? new HashedFile(join(dir, "openai", `${sp.name}.jsonl`), `openai/${sp.name}.jsonl`) : undefined;
      tokens?.startSplit(sp.name);
      const w = await writeSplit(dir, "data", sp.name, sp.entries, {
        schema: TrlRow,
        arrow: o.formats.includes("arrow"),
        shardRows: o.shardRows,
        row: (e) => {
          if (!tokens) return reader.row(e);
          const episode = reader.episode(e);
          const row = toTrlRow(episode, o.reasoning ?? "drop");
          tokens.add(episode, row);
          return row;
        },
        each: async (row) => {
          example ??= row;
          await step();
          if (openai) {
            const record = toOpenAiRecord(row);
            if (record) openai.write(`${JSON.stringify(record)}\n`, 1);
            else openaiSkipped++;
          }
        },
      });
      files.push(...w.files);
      if (tokens) files.push(...tokens.endSplit());
      const cs: CardSplit = { ...w.split, lengths: sp.entries.map((e) => e.length) };
      if (openai) {
        const entry = openai.close();
        files.push(entry);
        cs.openai = entry.path;
      }
      cardSplits.push(cs);
    }
    if (tokens) {
      if (tokens.rows === 0) throw new DatasetError(`--format tokens: none of the ${kept} kept trajectories has a token sequence (${tokens.reasons[0] ?? "no captured tokens"}); roll out with --capture tokens against a vLLM-compatible endpoint`);
      log(`tokens: ${tokens.rows} trajectories${tokens.skipped ? `, ${tokens.skipped} without a token sequence (first: ${tokens.reasons[0]})` : ""}`);
    }
    const prefs = preferences.length
      ? await writePreferenceConfigs(dir, {
          formats: preferences,
          plan,
          failed: s.failed,
          content,
          read: (e) => reader.row(e),
          dedupe: o.dedupe,
          perTask: o.pairsPerTask ?? 4,
          splits: o.splits,
          seed: o.seed,
          arrow: o.formats.includes("arrow"),
          shardRows: o.shardRows,
          each: checkStop,
          log,
        })
      : undefined;
    if (prefs) files.push(...prefs.files);
    const configs = [...(prefs?.configs ?? []), ...(tokens ? [tokens.config] : [])];
    o.inputs.forEach((path, i) => {
      const now = statSync(path);
      if (now.size !== stamps[i]!.size || now.mtimeMs !== stamps[i]!.mtimeMs) throw new DatasetError(`${path} changed during the build; run it again`);
    });

    const finalEntries = plan.splits.flatMap((sp) => sp.entries);
    const counts = new Map<string, { suite: string; type: string; branch: string; perSplit: number[] }>();
    const nonEmpty = plan.splits.filter((sp) => sp.entries.length);
    nonEmpty.forEach((sp, i) => {
      for (const e of sp.entries) {
        const key = `${e.suite}\u0000${e.type}\u0000${e.branch}`;
        const c = counts.get(key) ?? { suite: e.suite, type: e.type, branch: e.branch, perSplit: nonEmpty.map(() => 0) };
        c.perSplit[i]!++;
        counts.set(key, c);
      }
    });
    const usedSources = [...new Set([...finalEntries, ...(prefs?.entries ?? [])].map((e) => e.src))].sort((a, b) => a - b).map((i) => s.sources[i]!);
    const heldOut = heldOutRecord(sources);
    const options = {
      keep: o.keep,
      min_reward: o.minReward ?? null,
      dedupe: o.dedupe,
      max_per_task: o.maxPerTask ?? null,
      splits: o.splits,
      seed: o.seed,
      formats: o.formats,
      shard_rows: o.shardRows,
      reasoning: o.reasoning ?? "drop",
      ...(preferences.length ? { pairs_per_task: o.pairsPerTask ?? 4 } : {}),
      ...(o.maxTokens !== undefined ? { max_tokens: o.maxTokens } : {}),
      ...(o.tokenizer ? { tokenizer_sha256: o.tokenizer.sha256 } : {}),
      ...(o.chatTemplate ? { chat_template_sha256: o.chatTemplate.sha256 } : {}),
    };
    const stats = {
      rows_read: s.valid + s.bad,
      invalid: s.bad,
      valid: s.valid,
      filtered: s.filtered,
      unclean: s.unclean,
      excluded: s.excluded,
      excluded_patient: s.excludedBy.patient,
      excluded_task: s.excludedBy.task,
      excluded_instruction: s.excludedBy.instruction,
      duplicates: plan.duplicates,
      exact_duplicates: plan.exactDuplicates,
      deduped: plan.deduped,
      capped: plan.capped,
      ...(o.maxTokens !== undefined ? { too_long: s.tooLong } : {}),
      kept: finalEntries.length,
      openai_untrainable: openaiSkipped,
      ...(prefs ? { failed_excluded: s.failedExcluded, ...(o.maxTokens !== undefined ? { failed_too_long: s.failedTooLong } : {}), ...prefs.stats } : {}),
    };
    const card = renderCard({
      name: o.name,
      license: o.license,
      ehrgymVersion: EHRGYM_VERSION,
      splits: cardSplits,
      counts: [...counts.values()].sort((a, b) => (`${a.suite}\u0000${a.type}\u0000${a.branch}` < `${b.suite}\u0000${b.type}\u0000${b.branch}` ? -1 : 1)),
      sources: usedSources,
      showEndpoint: o.showEndpoint ?? false,
      ...(o.tokenizer ? { tokenizer: { sha256: o.tokenizer.sha256, size: o.tokenizer.size } } : {}),
      ...(o.chatTemplate ? { chatTemplate: { sha256: o.chatTemplate.sha256 } } : {}),
      passByModel: [...s.passByModel.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      stats,
      options,
      heldOut,
      excluded: { rows: s.excluded, patients: s.excludedPatients.size, byKind: s.excludedBy },
      noPatient: finalEntries.filter((e) => !e.patient).length,
      patientSources: [...new Set(finalEntries.map((e) => e.patientSource))].sort(),
      seeds: metaSeeds(o.inputs),
      ...(tokens ? { tokens: { rows: tokens.rows, skipped: tokens.skipped } } : {}),
      configs,
      ...(example ? { example } : {}),
    });
    const cardBytes = Buffer.from(card);
    writeFileSync(join(dir, "README.md"), cardBytes);
    files.unshift({ path: "README.md", rows: 0, bytes: cardBytes.length, sha256: sha256(cardBytes) });

    const manifest: Manifest = {
      format: "ehrgym-dataset/2",
      name: o.name,
      license: o.license,
      ehrgym_version: EHRGYM_VERSION,
      build: { options },
      inputs: s.inputs,
      held_out: heldOut,
      splits: nonEmpty.map((sp) => ({ name: sp.name, rows: sp.entries.length })),
      ...(configs.length ? { configs: configs.map((c) => ({ name: c.name, splits: c.splits.map((sp) => ({ name: sp.name, rows: sp.rows })) })) } : {}),
      counts: stats,
      files,
    };
    writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return { rows: finalEntries.length, splits: manifest.splits, bad: s.bad, badExamples: s.badExamples, manifest };
  } finally {
    reader.close();
  }
}
