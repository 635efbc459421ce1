// Pass 1 of a build: every input line validated as an episode row and filtered, keeping only a
// small entry per row (where its line is, what the plan needs). Inputs are cut into byte ranges at
// line starts so ranges can be scanned in parallel (worker threads); the merge is in range order,
// so the result does not depend on how many ranges ran where.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { Hasher } from "../env/fhir/index.ts";
import { EpisodeRow } from "../rollout/index.ts";
import { assistantHash, canonicalJson, rowId, toTrlMessages } from "./convert.ts";
import { HeldOut, type ExcludeSource } from "./exclude.ts";
import { isBlank, readLineBytes } from "./lines.ts";
import { putLongTexts, parseRowLine, takeLongTexts } from "./rowline.ts";

export interface Entry {
  id: string;
  /** suite + NUL + task_id */
  task: string;
  sample: number;
  patient: string;
  /** Assistant turns' hash (with --dedupe). */
  ahash: string;
  /** The row's line: index into the inputs, byte offset and length (no newline). */
  file: number;
  off: number;
  len: number;
  /** Index into ScanResult.sources. */
  src: number;
  suite: string;
  type: string;
  branch: string;
  reward: number;
}

/** Where rows came from, as the rows state it (for the card). */
export interface SourceInfo {
  kind: string;
  model: string;
  base_url_host: string | null;
  sampling: Record<string, unknown> | null;
  protocol: string;
  ehrgym_version: string | null;
}

export interface InputFile {
  path: string;
  bytes: number;
  sha256: string;
  lines: number;
}

export interface ScanResult {
  entries: Entry[];
  sources: SourceInfo[];
  inputs: InputFile[];
  /** Schema-valid rows seen, and those with reward 1 (the teacher's pass rate), per model. */
  valid: number;
  passByModel: Map<string, { n: number; correct: number }>;
  bad: number;
  badExamples: string[];
  /** Dropped by --keep / --min-reward. */
  filtered: number;
  /** Dropped because a held-out patient appears in them. */
  excluded: number;
  excludedPatients: Set<string>;
  /** Kept rows with no MRN (older rows): their split is chosen per task. */
  noPatient: number;
  /** Size and modification time of each input when scanned (pass 2 reads the rows back from them). */
  stamps: { size: number; mtimeMs: number }[];
}

export interface RowFilter {
  keep: "correct" | "all";
  minReward?: number;
  dedupe: boolean;
  heldOut: ExcludeSource[];
  maxBadExamples?: number;
}

/** One byte range of one input, scanned on its own. */
export interface RangeTask extends RowFilter {
  path: string;
  file: number;
  start: number;
  end: number;
}

export interface RangeScan {
  entries: Entry[];
  sources: SourceInfo[];
  valid: number;
  pass: [model: string, n: number, correct: number][];
  bad: number;
  /** Line numbers counted from the range's start. */
  badExamples: { line: number; why: string }[];
  filtered: number;
  excluded: number;
  excludedPatients: string[];
  noPatient: number;
  lines: number;
}

export async function scanRange(t: RangeTask): Promise<RangeScan> {
  const r: RangeScan = { entries: [], sources: [], valid: 0, pass: [], bad: 0, badExamples: [], filtered: 0, excluded: 0, excludedPatients: [], noPatient: 0, lines: 0 };
  const heldOut = new HeldOut(t.heldOut);
  const excluded = new Set<string>();
  const pass = new Map<string, { n: number; correct: number }>();
  const indexOf = sourceIndexer(r.sources);
  const bad = (line: number, why: string) => {
    r.bad++;
    if (r.badExamples.length < (t.maxBadExamples ?? 5)) r.badExamples.push({ line, why });
  };

  for await (const line of readLineBytes(t.path, { start: t.start, end: t.end })) {
    r.lines = line.lineNo;
    if (isBlank(line.bytes)) continue;
    let json: unknown;
    try {
      json = parseRowLine(line.bytes);
    } catch {
      bad(line.lineNo, line.terminated ? "not a JSON line" : "torn last line (no newline, not JSON)");
      continue;
    }
    const longs = takeLongTexts(json);
    const parsed = EpisodeRow.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      bad(line.lineNo, `not an episode row: field ${issue.path.join(".") || "(row)"}: ${issue.message}`);
      continue;
    }
    const row = putLongTexts(parsed.data, longs);
    if (!row.messages.some((m) => m.role === "assistant")) {
      bad(line.lineNo, "transcript without an assistant turn");
      continue;
    }
    r.valid++;
    const p = pass.get(row.policy.model) ?? { n: 0, correct: 0 };
    p.n++;
    if (row.reward === 1) p.correct++;
    pass.set(row.policy.model, p);

    if ((t.keep === "correct" && row.reward !== 1) || (t.minReward !== undefined && row.reward < t.minReward)) {
      r.filtered++;
      continue;
    }
    const patient = row.mrn ?? "";
    const hit = heldOut.hit(
      patient,
      row.messages.flatMap((m) => [m.content ?? null, ...(m.tool_calls ?? []).map((c) => c.function.arguments)]),
    );
    if (hit) {
      r.excluded++;
      excluded.add(hit);
      continue;
    }
    const source: SourceInfo = {
      kind: row.policy.kind,
      model: row.policy.model,
      base_url_host: row.policy.base_url_host ?? null,
      sampling: row.policy.sampling ?? null,
      protocol: row.protocol,
      ehrgym_version: row.ehrgym_version ?? null,
    };
    const src = indexOf(source);
    if (!patient) r.noPatient++;
    r.entries.push({
      id: rowId(row),
      task: `${row.suite}\u0000${row.task_id}`,
      sample: row.sample,
      patient,
      ahash: t.dedupe ? assistantHash(toTrlMessages(row.messages)) : "",
      file: t.file,
      off: line.offset,
      len: line.bytes.length,
      src,
      suite: row.suite,
      type: row.type,
      branch: row.branch ?? "",
      reward: row.reward,
    });
  }
  r.pass = [...pass.entries()].map(([model, { n, correct }]) => [model, n, correct]);
  r.excludedPatients = [...excluded];
  return r;
}

/** Adds each distinct source (by its canonical JSON) to `list` once; gives its index there. */
function sourceIndexer(list: SourceInfo[]): (source: SourceInfo) => number {
  const index = new Map<string, number>();
  return (source) => {
    const key = canonicalJson(source);
    let i = index.get(key);
    if (i === undefined) {
      i = list.length;
      index.set(key, i);
      list.push(source);
    }
    return i;
  };
}

const RANGE_BYTES = 32 << 20;

/** Cuts a file into ranges of about `RANGE_BYTES`, each starting at a line start. */
export function splitRanges(path: string, size: number, rangeBytes = RANGE_BYTES): { start: number; end: number }[] {
  const cuts = [0];
  const fd = openSync(path, "r");
  try {
    const window = Buffer.allocUnsafe(1 << 16);
    for (let at = rangeBytes; at < size; ) {
      const n = readSync(fd, window, 0, window.length, at);
      if (n === 0) break;
      const nl = window.subarray(0, n).indexOf(10);
      if (nl === -1) {
        at += n;
        continue;
      }
      const cut = at + nl + 1;
      if (cut >= size) break;
      cuts.push(cut);
      at = cut + rangeBytes;
    }
  } finally {
    closeSync(fd);
  }
  return cuts.map((start, i) => ({ start, end: cuts[i + 1] ?? size }));
}

async function sha256File(hasher: Hasher, path: string): Promise<string> {
  const fd = openSync(path, "r");
  try {
    const h = await hasher.hash(fd);
    if ("error" in h) throw new Error(`cannot hash ${path}: ${h.error}`);
    return h.sha256;
  } finally {
    closeSync(fd);
  }
}

/** Scans every input, its ranges through `run` (in this thread or a worker pool), and merges the results in input order; `hasher` hashes the inputs meanwhile. */
export async function scan(paths: string[], filter: RowFilter, run: (t: RangeTask) => Promise<RangeScan>, hasher: Hasher, rangeBytes?: number): Promise<ScanResult> {
  const stamps = paths.map((p) => statSync(p)).map((s) => ({ size: s.size, mtimeMs: s.mtimeMs }));
  const tasks = paths.flatMap((path, file) => splitRanges(path, stamps[file]!.size, rangeBytes).map((range) => ({ ...filter, path, file, ...range })));
  const [parts, hashes] = await Promise.all([Promise.all(tasks.map(run)), Promise.all(paths.map((p) => sha256File(hasher, p)))]);

  const r: ScanResult = { entries: [], sources: [], inputs: [], valid: 0, passByModel: new Map(), bad: 0, badExamples: [], filtered: 0, excluded: 0, excludedPatients: new Set(), noPatient: 0, stamps };
  const indexOf = sourceIndexer(r.sources);
  // One copy of each repeated string across all ranges (entries came back from other threads).
  const strings = new Map<string, string>();
  const intern = (s: string) => strings.get(s) ?? (strings.set(s, s), s);
  const linesBefore = paths.map(() => 0);
  const max = filter.maxBadExamples ?? 5;
  parts.forEach((part, i) => {
    const { path, file } = tasks[i]!;
    const global = part.sources.map(indexOf);
    for (const e of part.entries) {
      r.entries.push({ ...e, task: intern(e.task), patient: intern(e.patient), suite: intern(e.suite), type: intern(e.type), branch: intern(e.branch), src: global[e.src]! });
    }
    for (const b of part.badExamples) if (r.badExamples.length < max) r.badExamples.push(`${path}:${linesBefore[file]! + b.line}: ${b.why}`);
    linesBefore[file]! += part.lines;
    r.valid += part.valid;
    r.bad += part.bad;
    r.filtered += part.filtered;
    r.excluded += part.excluded;
    r.noPatient += part.noPatient;
    for (const p of part.excludedPatients) r.excludedPatients.add(p);
    for (const [model, n, correct] of part.pass) {
      const p = r.passByModel.get(model) ?? { n: 0, correct: 0 };
      p.n += n;
      p.correct += correct;
      r.passByModel.set(model, p);
    }
  });
  r.inputs = paths.map((path, i) => ({ path, bytes: stamps[i]!.size, sha256: hashes[i]!, lines: linesBefore[i]! }));
  return r;
}
