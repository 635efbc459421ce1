// `dataset validate`: the folder is what its manifest says (hashes, sizes, rows), every line passes
// the checks of its format (checks.ts, the same ones `dataset check` runs), splits are
// patient-disjoint, no held-out patient or task appears, the card's YAML matches the files, the
// Arrow files hold the JSONL's rows.
import { createReadStream, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { RecordBatchReader } from "apache-arrow";
import { parse } from "yaml";
import { invalidTurns, openAiLineProblems, trlLineProblems, type Keep } from "./checks.ts";
import { firstIssue } from "../env/util/index.ts";
import { HeldOut, readExcludeFile } from "./exclude.ts";
import { cardFeatures, hfFeatures } from "./features.ts";
import { readLines } from "./lines.ts";
import { DatasetError, fileProblems, MANIFEST, readManifest, type Manifest } from "./manifest.ts";
import { DpoRow, dpoRowProblems } from "./dpo.ts";
import { KtoRow, ktoRowProblems } from "./kto.ts";
import { PREFERENCE_SCHEMAS, type PreferenceFormat } from "./preference-configs.ts";
import { TrlRow } from "./schema.ts";
import type { ChatTemplate } from "./chat-template.ts";
import type { TextTokenizer } from "./tokenizer.ts";
import { validateTokens } from "./tokens-validate.ts";
import { TOKENS_DIR, TokensRow } from "./tokens.ts";
import { SHARD_FILE } from "./shards.ts";
import type { RowForHeldOut } from "./exclude.ts";
import type { z } from "zod";

const MAX_PROBLEMS = 50;


function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** The non-blank lines of a file, parsed (undefined, with the problem noted, when a line is not JSON); `path` names it in problems. */
async function* jsonLines(abs: string, path: string, problem: (p: string) => void): AsyncGenerator<{ where: string; json: unknown }> {
  for await (const line of readLines(abs)) {
    if (!line.text.trim()) continue;
    const where = `${path}:${line.lineNo}`;
    try {
      yield { where, json: JSON.parse(line.text) as unknown };
    } catch {
      problem(`${where}: not JSON`);
      yield { where, json: undefined };
    }
  }
}

type Checked = { problems: string[]; row?: RowForHeldOut & { id: string } };

const schemaOfFolder = (folder: string): z.ZodObject => (folder in PREFERENCE_SCHEMAS ? PREFERENCE_SCHEMAS[folder as PreferenceFormat] : folder === TOKENS_DIR ? TokensRow : TrlRow);

/** The keep rule's problems of a preference side, read over prompt + side, its turns counted from the side's start. */
function cleanProblems(keep: Keep, side: string, row: { protocol: "text" | "tools"; tools: readonly unknown[] | null; prompt: DpoRow["prompt"] }, trained: DpoRow["prompt"]): string[] {
  if (keep !== "clean") return [];
  return invalidTurns({ messages: trained, protocol: row.protocol, tools: row.tools }).map((t) => `${side}[${t.index - row.prompt.length}]: invalid action in a --keep clean dataset: ${t.why}`);
}

/** The line checks of each config, and what the cross-row checks need of a row (id, patient, its messages for decontamination). */
function configChecks(name: string): ((json: unknown, keep: Keep) => Checked) | undefined {
  switch (name) {
    case "default":
      return (json, keep) => {
        const parsed = TrlRow.safeParse(json);
        return { problems: trlLineProblems(json, keep), ...(parsed.success ? { row: parsed.data } : {}) };
      };
    case "dpo":
      return (json, keep) => {
        const parsed = DpoRow.safeParse(json);
        if (!parsed.success) return { problems: [`field ${firstIssue(parsed.error, "(row)")}`] };
        const row = parsed.data;
        const chosen = [...row.prompt, ...row.chosen];
        return {
          problems: [...dpoRowProblems(row), ...cleanProblems(keep, "chosen", row, chosen)],
          row: { ...row, messages: [...chosen, ...row.rejected] },
        };
      };
    case "kto":
      return (json, keep) => {
        const parsed = KtoRow.safeParse(json);
        if (!parsed.success) return { problems: [`field ${firstIssue(parsed.error, "(row)")}`] };
        const row = parsed.data;
        const messages = [...row.prompt, ...row.completion];
        return {
          problems: [...ktoRowProblems(row), ...(row.label ? cleanProblems(keep, "completion", row, messages) : [])],
          row: { ...row, messages },
        };
      };
    case "tokens":
      return (json) => {
        const parsed = TokensRow.safeParse(json);
        if (!parsed.success) return { problems: [`field ${firstIssue(parsed.error, "(row)")}`] };
        return { problems: [], row: parsed.data as TokensRow & RowForHeldOut };
      };
    default:
      return undefined;
  }
}

/** The folder's problems (the first 50), and how many rows and files it holds. */
/** `tokenizer` (and `chatTemplate`): count the token rows that re-tokenise to other ids when rendered again. */
export async function validateDataset(dir: string, opts: { excludeMrnsFrom?: string[]; tokenizer?: TextTokenizer; chatTemplate?: ChatTemplate } = {}) {
  const problems: string[] = [];
  const problem = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const manifest: Manifest = readManifest(dir);

  // files: exactly the manifest's, byte for byte
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  for (const path of listFiles(dir)) if (path !== MANIFEST && !listed.has(path)) problem(`${path}: not in manifest.json`);
  for (const p of await fileProblems(dir, manifest.files)) problem(p);

  // the held-out set as the build recorded it (hashes), plus any files given now (their instructions too)
  const heldOut = new HeldOut((opts.excludeMrnsFrom ?? []).map(readExcludeFile), manifest.held_out);
  const keep = manifest.build.options.keep;

  // rows of every config: schema, row checks, unique ids, patient-disjoint splits (across configs), decontamination
  const splitOfPatient = new Map<string, string>();
  // --keep correct keeps trajectories that recovered from an invalid turn: trainable, but worth a warning
  const untrained = { rows: 0, turns: 0, first: undefined as string | undefined };
  const idsByFile = new Map<string, string[]>();
  let rows = 0;
  const configs = [{ name: "default", folder: "data" }, ...(manifest.configs ?? []).map((c) => ({ name: c.name, folder: c.name }))];
  if (manifest.files.some((f) => f.path.startsWith(`${TOKENS_DIR}/`)) && !configs.some((c) => c.name === "tokens")) problem(`manifest.json: files under ${TOKENS_DIR}/ but no tokens config (a build of an older ehrgym: build it again)`);
  for (const config of configs) {
    const check = configChecks(config.name);
    if (!check) {
      problem(`manifest.json: config ${config.name} is not one this ehrgym knows`);
      continue;
    }
    const ids = new Set<string>();
    for (const f of manifest.files.filter((x) => x.path.startsWith(`${config.folder}/`) && x.path.endsWith(".jsonl"))) {
      const split = SHARD_FILE.exec(f.path.slice(config.folder.length + 1))?.[1] ?? "";
      const fileIds: string[] = [];
      let n = 0;
      for await (const { where, json } of jsonLines(join(dir, f.path), f.path, problem)) {
        n++;
        if (json === undefined) continue;
        const checked = check(json, keep);
        for (const p of checked.problems) problem(`${where}: ${p}`);
        const row = checked.row;
        if (!row) continue;
        if (keep === "correct" && config.name === "default") {
          const invalid = invalidTurns(row as TrlRow).length;
          if (invalid) {
            untrained.rows++;
            untrained.turns += invalid;
            untrained.first ??= where;
          }
        }
        fileIds.push(row.id);
        if (ids.has(row.id)) problem(`${where}: id ${row.id} appears twice`);
        ids.add(row.id);
        if (row.patient) {
          const other = splitOfPatient.get(row.patient);
          if (other && other !== split) problem(`${where}: patient ${row.patient} is in splits ${other} and ${split}`);
          splitOfPatient.set(row.patient, split);
        }
        const hit = heldOut.hit(row);
        if (hit) problem(`${where}: ${hit} (decontamination: --exclude-mrns-from)`);
      }
      rows += n;
      idsByFile.set(f.path, fileIds);
      if (n !== f.rows) problem(`${f.path}: ${n} rows, manifest.json says ${f.rows}`);
    }
  }

  // Arrow: the JSONL's rows in the same order, the huggingface features in the schema metadata
  for (const f of manifest.files.filter((x) => x.path.endsWith(".arrow"))) {
    const features = JSON.stringify(hfFeatures(schemaOfFolder(f.path.split("/")[0]!)));
    const jsonlIds = idsByFile.get(f.path.replace(/\.arrow$/, ".jsonl"));
    const got: string[] = [];
    try {
      const reader = await RecordBatchReader.from(createReadStream(join(dir, f.path)));
      await reader.open();
      const meta = reader.schema.metadata.get("huggingface");
      const stored = meta ? JSON.stringify((JSON.parse(meta) as { info?: { features?: unknown } }).info?.features) : undefined;
      if (stored !== features) problem(`${f.path}: schema metadata "huggingface" does not hold this dataset's features`);
      for await (const batch of reader) {
        const col = batch.getChild("id");
        for (let i = 0; i < batch.numRows; i++) got.push(String(col?.get(i)));
      }
    } catch (err) {
      problem(`${f.path}: not a readable Arrow IPC stream (${(err as Error).message})`);
      continue;
    }
    if (got.length !== f.rows) problem(`${f.path}: ${got.length} rows, manifest.json says ${f.rows}`);
    if (jsonlIds && got.join() !== jsonlIds.join()) problem(`${f.path}: rows differ from ${f.path.replace(/\.arrow$/, ".jsonl")}`);
  }

  // format openai: only the fields the upload accepts
  for (const f of manifest.files.filter((x) => x.path.startsWith("openai/"))) {
    let n = 0;
    for await (const { where, json } of jsonLines(join(dir, f.path), f.path, problem)) {
      n++;
      if (json !== undefined) for (const p of openAiLineProblems(json)) problem(`${where}: ${p}`);
    }
    if (n !== f.rows) problem(`${f.path}: ${n} rows, manifest.json says ${f.rows}`);
  }

  // the card: YAML header that parses, splits and features that match the files
  const cardPath = join(dir, "README.md");
  if (existsSync(cardPath)) {
    const text = readFileSync(cardPath, "utf8");
    const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
    if (!m) problem("README.md: no YAML header");
    else {
      try {
        type Info = { config_name?: string; splits?: { name: string; num_examples: number }[]; features?: unknown };
        const header = parse(m[1]!) as { dataset_info?: Info | Info[] };
        const infos = Array.isArray(header.dataset_info) ? header.dataset_info : header.dataset_info ? [{ config_name: "default", ...header.dataset_info }] : [];
        for (const config of [{ name: "default", folder: "data", splits: manifest.splits }, ...(manifest.configs ?? []).map((c) => ({ ...c, folder: c.name }))]) {
          const info = infos.find((x) => x.config_name === config.name);
          if (!info) {
            problem(`README.md: dataset_info has no config ${config.name}`);
            continue;
          }
          for (const s of config.splits) {
            const card = info.splits?.find((x) => x.name === s.name);
            const fileRows = manifest.files.filter((f) => f.path.startsWith(`${config.folder}/`) && SHARD_FILE.exec(f.path.slice(config.folder.length + 1))?.[1] === s.name && f.path.endsWith(".jsonl")).reduce((a, f) => a + f.rows, 0);
            if (!card) problem(`README.md: dataset_info.splits of ${config.name} has no ${s.name}`);
            else if (card.num_examples !== fileRows) problem(`README.md: ${config.name} ${s.name} num_examples ${card.num_examples}, the files hold ${fileRows}`);
          }
          if (JSON.stringify(info.features) !== JSON.stringify(cardFeatures(schemaOfFolder(config.folder)))) problem(`README.md: dataset_info.features of ${config.name} differ from the row schema`);
        }
      } catch (err) {
        problem(`README.md: the YAML header does not parse (${(err as Error).message})`);
      }
    }
  }
  const tokens = await validateTokens(dir, manifest, opts.tokenizer, opts.chatTemplate);
  const warnings = untrained.rows
    ? [
        `${untrained.rows} rows of this --keep correct dataset hold ${untrained.turns} assistant turns that are not valid actions (first: ${untrained.first}); the trl and arrow files train on them as written: mask them, use the openai format (weight 0), or rebuild with --keep clean`,
      ]
    : [];
  return { problems, warnings, rows, files: manifest.files.length, ...(tokens ? { tokens } : {}) };
}

export type ValidateResult = Awaited<ReturnType<typeof validateDataset>>;

/** `dataset check FILE...`: the checks of each line's format (a row has `task_id`: format trl; else format openai). */
export async function checkFiles(paths: readonly string[], keep: Keep): Promise<{ path: string; rows: number; problems: string[] }[]> {
  const out: { path: string; rows: number; problems: string[] }[] = [];
  for (const path of paths) {
    const problems: string[] = [];
    let rows = 0;
    try {
      for await (const { where, json } of jsonLines(path, path, (p) => problems.push(p))) {
        rows++;
        if (json === undefined) continue;
        const trl = json !== null && typeof json === "object" && "task_id" in json;
        for (const p of trl ? trlLineProblems(json, keep) : openAiLineProblems(json)) problems.push(`${where}: ${p}`);
      }
    } catch (err) {
      if (!(err instanceof DatasetError)) throw err;
      problems.push(err.message);
    }
    if (!rows && !problems.length) problems.push(`${path}: no rows`);
    out.push({ path, rows, problems });
  }
  return out;
}
