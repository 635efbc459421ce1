// Pass 1 of a build: every input line read once, validated as an episode row and filtered, keeping
// only a small entry per row (where its line is, what the plan needs). The inputs are hashed on the way.
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { basename } from "node:path";
import { EpisodeRow, renderChatML } from "../rollout/index.ts";
import type { BuildOptions } from "./build.ts";
import { invalidTurns } from "./checks.ts";
import { assistantHash, canonicalJson, rowId, toTrlRow } from "./convert.ts";
import type { HeldOut } from "./exclude.ts";
import type { Manifest } from "./manifest.ts";
import { isModelFailure } from "./preference.ts";
import type { TrlRow } from "./schema.ts";
import type { ChatTemplate } from "./chat-template.ts";
import type { TextTokenizer } from "./tokenizer.ts";
import { firstIssue, lineText, NOT_UTF8, readLineBytes } from "../env/util/index.ts";

export interface Entry {
  id: string;
  /** suite + NUL + task_id */
  task: string;
  sample: number;
  patient: string;
  /** Assistant turns' hash (--dedupe; a preference pair never pairs two equal ones). */
  ahash: string;
  /** Hash of what a preference pair must share: the task, the messages before the first assistant turn, the tools. */
  phash: string;
  reward: number;
  status: string;
  /** Hash of the row as trained on (messages, tools, reward): equal hashes are exact duplicates. */
  chash: string;
  /** The row's line: index into the inputs, byte offset and length (no newline). */
  file: number;
  off: number;
  len: number;
  /** Index into the scan's sources. */
  src: number;
  suite: string;
  type: string;
  branch: string;
  patientSource: string;
  /** The row's conversation as trained on, rendered (rowLength): tokens with a tokenizer, else characters. */
  length: number;
}

/** Where a row came from, as the row states it (for the card). */
const sourceOf = (row: EpisodeRow) => ({
  kind: row.policy.kind,
  model: row.policy.model,
  base_url_host: row.policy.base_url_host ?? null,
  sampling: row.policy.sampling ?? null,
  protocol: row.protocol,
  ehrgym_version: row.ehrgym_version ?? null,
});
export type SourceInfo = ReturnType<typeof sourceOf>;

type RowFilter = Pick<BuildOptions, "keep" | "minReward" | "dedupe" | "reasoning" | "tokenizer" | "chatTemplate" | "maxTokens"> & { heldOut: HeldOut; preferences: boolean };

/**
 * A row's length as a trainer sees it: its messages (with reasoning when kept) and tool list rendered with
 * the model's chat template, else as ChatML (rollout/chatml.ts: the tools as a system block, tool calls as
 * `<tool_call>` blocks, reasoning as a `<think>` block), in tokens of `tokenizer` when given, else in characters.
 */
export function rowLength(trl: TrlRow, tokenizer: Pick<TextTokenizer, "encode"> | undefined, template?: ChatTemplate): number {
  const text = template
    ? template.render(trl.messages as Record<string, unknown>[], trl.tools)
    : renderChatML(trl.messages as Parameters<typeof renderChatML>[0], trl.tools ?? undefined, false);
  return tokenizer ? tokenizer.encode(text).length : text.length;
}

export const promptHash = (trl: TrlRow) => {
  const first = trl.messages.findIndex((m) => m.role === "assistant");
  return createHash("sha256").update(canonicalJson([trl.suite, trl.task_id, trl.messages.slice(0, first), trl.tools])).digest("hex");
};

/** `progress`: bytes read of all inputs, against their total size. */
export async function scan(paths: readonly string[], filter: RowFilter, progress?: (done: number, total: number) => void, signal?: AbortSignal) {
  const r = {
    entries: [] as Entry[],
    /** With preference formats: failed episodes the keep rule left out (the rejected / undesirable side). */
    failed: [] as Entry[],
    /** Failed episodes left out of the preference side for touching the held-out set. */
    failedExcluded: 0,
    sources: [] as SourceInfo[],
    inputs: [] as Manifest["inputs"],
    /** Schema-valid rows seen, and those with reward 1 (the teacher's pass rate), per model. */
    valid: 0,
    passByModel: new Map<string, { n: number; correct: number }>(),
    bad: 0,
    /** The first 5 bad rows, "file:line: why". */
    badExamples: [] as string[],
    /** Dropped by --keep / --min-reward. */
    filtered: 0,
    /** Correct rows dropped by --keep clean: an assistant turn was not a valid action. */
    unclean: 0,
    /** Dropped because they touch the held-out set, by reason kind (patient, task, instruction). */
    excluded: 0,
    excludedBy: { patient: 0, task: 0, instruction: 0 },
    excludedPatients: new Set<string>(),
    /** Dropped by --max-tokens: longer than the limit (kept side), and failed episodes left out of the preference side for it. */
    tooLong: 0,
    failedTooLong: 0,
  };
  const sourceIndex = new Map<string, number>();
  const totalBytes = paths.reduce((n, p) => n + statSync(p).size, 0);
  let readBefore = 0;
  for (const [file, path] of paths.entries()) {
    const hash = createHash("sha256");
    let bytes = 0;
    let lines = 0;
    const bad = (lineNo: number, why: string) => {
      r.bad++;
      if (r.badExamples.length < 5) r.badExamples.push(`${path}:${lineNo}: ${why}`);
    };
    for await (const line of readLineBytes(path)) {
      hash.update(line.bytes);
      bytes += line.bytes.length;
      if (line.terminated) {
        hash.update("\n");
        bytes++;
      }
      lines = line.lineNo;
      progress?.(readBefore + bytes, totalBytes);
      signal?.throwIfAborted();
      const text = lineText(line.bytes);
      if (text === undefined) {
        bad(line.lineNo, NOT_UTF8);
        continue;
      }
      if (!text.trim()) continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        bad(line.lineNo, line.terminated ? "not a JSON line" : "torn last line (no newline, not JSON)");
        continue;
      }
      const parsed = EpisodeRow.safeParse(json);
      if (!parsed.success) {
        bad(line.lineNo, `not an episode row: field ${firstIssue(parsed.error, "(row)")}`);
        continue;
      }
      const row = parsed.data;
      if (!row.messages.some((m) => m.role === "assistant")) {
        bad(line.lineNo, "transcript without an assistant turn");
        continue;
      }
      r.valid++;
      const p = r.passByModel.get(row.policy.model) ?? { n: 0, correct: 0 };
      p.n++;
      if (row.reward === 1) p.correct++;
      r.passByModel.set(row.policy.model, p);

      let list = r.entries;
      if ((filter.keep !== "all" && row.reward !== 1) || (filter.minReward !== undefined && row.reward < filter.minReward)) {
        r.filtered++;
        if (!filter.preferences || !isModelFailure(row)) continue;
        list = r.failed;
      }
      const trl = toTrlRow(row);
      if (list === r.entries && filter.keep === "clean" && invalidTurns(trl).length) {
        r.unclean++;
        continue;
      }
      const held = filter.heldOut.hit(trl);
      if (held && list === r.failed) {
        r.failedExcluded++;
        continue;
      }
      if (held) {
        r.excluded++;
        r.excludedBy[held.startsWith("evaluation task") ? "task" : held.startsWith("held-out patient") ? "patient" : "instruction"]++;
        if (held.startsWith("held-out patient ")) r.excludedPatients.add(held.slice("held-out patient ".length));
        continue;
      }
      const length = rowLength(filter.reasoning === "keep" ? toTrlRow(row, "keep") : trl, filter.tokenizer, filter.chatTemplate);
      if (filter.maxTokens !== undefined && length > filter.maxTokens) {
        if (list === r.failed) r.failedTooLong++;
        else r.tooLong++;
        continue;
      }
      const source = sourceOf(row);
      const key = canonicalJson(source);
      let src = sourceIndex.get(key);
      if (src === undefined) {
        src = r.sources.length;
        sourceIndex.set(key, src);
        r.sources.push(source);
      }
      list.push({
        id: rowId(row),
        task: `${row.suite}\u0000${row.task_id}`,
        sample: row.sample,
        patient: trl.patient,
        ahash: filter.dedupe || filter.preferences ? assistantHash(row.messages) : "",
        phash: filter.preferences ? promptHash(trl) : "",
        reward: row.reward,
        status: row.status,
        chash: createHash("sha256").update(JSON.stringify([trl.messages, trl.tools, trl.reward])).digest("hex"),
        file,
        off: line.offset,
        len: line.bytes.length,
        src,
        suite: row.suite,
        type: row.type,
        branch: row.branch ?? "",
        patientSource: trl.patient_source,
        length,
      });
    }
    r.inputs.push({ file: basename(path), bytes, sha256: hash.digest("hex"), lines });
    readBefore += bytes;
  }
  return r;
}
