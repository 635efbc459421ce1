// `dataset validate`: the folder is what its manifest says (hashes, sizes, rows), every line passes
// the checks of its format (checks.ts, the same ones `dataset check` runs), splits are
// patient-disjoint, no held-out patient or task appears, the card's YAML matches the files, the
// Arrow files hold the JSONL's rows.
import { createReadStream, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { RecordBatchReader } from "apache-arrow";
import { parse } from "yaml";
import { openAiLineProblems, trlLineProblems, type Keep } from "./checks.ts";
import { HeldOut, readExcludeFile } from "./exclude.ts";
import { defaultInfo } from "./card.ts";
import { cardFeatures, hfFeatures } from "./features.ts";
import { readLines } from "./lines.ts";
import { DatasetError, fileProblems, MANIFEST, readManifest, type Manifest } from "./manifest.ts";
import { TrlRow } from "./schema.ts";
import { validateTokens } from "./tokens-validate.ts";

const MAX_PROBLEMS = 50;

type DatasetInfo = { splits?: { name: string; num_examples: number }[]; features?: unknown };

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

/** The folder's problems (the first 50), and how many rows and files it holds. */
export async function validateDataset(dir: string, opts: { excludeMrnsFrom?: string[]; tokenizer?: string } = {}) {
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

  // rows: schema, row checks, unique ids, patient-disjoint splits, decontamination
  const splitOfPatient = new Map<string, string>();
  const ids = new Set<string>();
  const idsByFile = new Map<string, string[]>();
  let rows = 0;
  for (const f of manifest.files.filter((x) => x.path.startsWith("data/") && x.path.endsWith(".jsonl"))) {
    const split = f.path.slice(5).replace(/-\d{5}-of-\d{5}\.jsonl$/, "");
    const fileIds: string[] = [];
    let n = 0;
    for await (const { where, json } of jsonLines(join(dir, f.path), f.path, problem)) {
      n++;
      if (json === undefined) continue;
      const rowProblems = trlLineProblems(json, keep);
      for (const p of rowProblems) problem(`${where}: ${p}`);
      const parsed = TrlRow.safeParse(json);
      if (!parsed.success) continue;
      const row = parsed.data;
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

  // Arrow: the JSONL's rows in the same order, the huggingface features in the schema metadata
  const features = JSON.stringify(hfFeatures());
  for (const f of manifest.files.filter((x) => x.path.endsWith(".arrow"))) {
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
        const parsed = parse(m[1]!) as { dataset_info?: Parameters<typeof defaultInfo<DatasetInfo>>[0] };
        const header = { dataset_info: defaultInfo<DatasetInfo>(parsed.dataset_info) };
        for (const s of manifest.splits) {
          const card = header.dataset_info?.splits?.find((x) => x.name === s.name);
          const fileRows = manifest.files.filter((f) => f.path.startsWith(`data/${s.name}-`) && f.path.endsWith(".jsonl")).reduce((a, f) => a + f.rows, 0);
          if (!card) problem(`README.md: dataset_info.splits has no ${s.name}`);
          else if (card.num_examples !== fileRows) problem(`README.md: ${s.name} num_examples ${card.num_examples}, the files hold ${fileRows}`);
        }
        if (JSON.stringify(header.dataset_info?.features) !== JSON.stringify(cardFeatures())) problem("README.md: dataset_info.features differ from the row schema");
      } catch (err) {
        problem(`README.md: the YAML header does not parse (${(err as Error).message})`);
      }
    }
  }
  const tokens = await validateTokens(dir, manifest, problem, opts.tokenizer);
  return { problems, rows, files: manifest.files.length, ...(tokens ? { tokens } : {}) };
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
