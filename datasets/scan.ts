// Pass 1 of a build: stream every input line, validate it as an episode row, filter, convert, park
// the converted line in the spill file, and keep only a small entry per row in memory.
import { createHash } from "node:crypto";
import { EpisodeRow } from "../rollout/index.ts";
import { assistantHash, canonicalJson, toTrlRow } from "./convert.ts";
import type { HeldOut } from "./exclude.ts";
import { readLines } from "./lines.ts";
import type { Spill } from "./spill.ts";

export interface Entry {
  id: string;
  /** suite + NUL + task_id */
  task: string;
  sample: number;
  patient: string;
  /** Assistant turns' hash (with --dedupe). */
  ahash: string;
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
}

export interface ScanOptions {
  keep: "correct" | "all";
  minReward?: number;
  dedupe: boolean;
  heldOut: HeldOut;
  spill: Spill;
  maxBadExamples?: number;
}

export async function scan(paths: string[], o: ScanOptions): Promise<ScanResult> {
  const r: ScanResult = {
    entries: [],
    sources: [],
    inputs: [],
    valid: 0,
    passByModel: new Map(),
    bad: 0,
    badExamples: [],
    filtered: 0,
    excluded: 0,
    excludedPatients: new Set(),
    noPatient: 0,
  };
  const sourceIndex = new Map<string, number>();
  const strings = new Map<string, string>();
  const intern = (s: string) => strings.get(s) ?? (strings.set(s, s), s);
  const bad = (where: string, why: string) => {
    r.bad++;
    if (r.badExamples.length < (o.maxBadExamples ?? 5)) r.badExamples.push(`${where}: ${why}`);
  };

  for (const path of paths) {
    const hash = createHash("sha256");
    let bytes = 0;
    let lines = 0;
    for await (const line of readLines(path, (chunk) => {
      hash.update(chunk);
      bytes += chunk.length;
    })) {
      lines = line.lineNo;
      if (!line.text.trim()) continue;
      const where = `${path}:${line.lineNo}`;
      let json: unknown;
      try {
        json = JSON.parse(line.text);
      } catch {
        bad(where, line.terminated ? "not a JSON line" : "torn last line (no newline, not JSON)");
        continue;
      }
      const parsed = EpisodeRow.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        bad(where, `not an episode row: field ${issue.path.join(".") || "(row)"}: ${issue.message}`);
        continue;
      }
      const row = parsed.data;
      if (!row.messages.some((m) => m.role === "assistant")) {
        bad(where, "transcript without an assistant turn");
        continue;
      }
      r.valid++;
      const pass = r.passByModel.get(row.policy.model) ?? { n: 0, correct: 0 };
      pass.n++;
      if (row.reward === 1) pass.correct++;
      r.passByModel.set(row.policy.model, pass);

      if ((o.keep === "correct" && row.reward !== 1) || (o.minReward !== undefined && row.reward < o.minReward)) {
        r.filtered++;
        continue;
      }
      const trl = toTrlRow(row);
      const hit = o.heldOut.hit(
        trl.patient,
        trl.messages.flatMap((m) => [m.content, ...(m.tool_calls ?? []).map((c) => c.function.arguments)]),
      );
      if (hit) {
        r.excluded++;
        r.excludedPatients.add(hit);
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
      const sourceKey = canonicalJson(source);
      let src = sourceIndex.get(sourceKey);
      if (src === undefined) {
        src = r.sources.length;
        sourceIndex.set(sourceKey, src);
        r.sources.push(source);
      }
      const at = o.spill.append(`${JSON.stringify(trl)}\n`);
      if (!trl.patient) r.noPatient++;
      r.entries.push({
        id: trl.id,
        task: intern(`${trl.suite}\u0000${trl.task_id}`),
        sample: trl.sample,
        patient: intern(trl.patient),
        ahash: o.dedupe ? assistantHash(trl.messages) : "",
        off: at.off,
        len: at.len,
        src,
        suite: intern(trl.suite),
        type: intern(trl.type),
        branch: intern(trl.branch ?? ""),
        reward: trl.reward,
      });
    }
    r.inputs.push({ path, bytes, sha256: hash.digest("hex"), lines });
  }
  return r;
}
