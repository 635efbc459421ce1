// --exclude-mrns-from: evaluation files whose patients and tasks must never appear in training data.
// Accepts official task files (JSON array), ehrgym task files (JSONL) and MRN lists (one per line,
// # comments). A row is held out when it touches a held-out patient (its MRN, or any MRN-shaped
// token of its transcript), is one of the files' tasks (same suite and task id), or its prompt holds
// one of their instructions ("Patient not found" lookups have no MRN: only the task catches them).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseTaskFile, TaskFileError } from "../env/tasks/index.ts";
import { UserError, utf8Text } from "../env/util/index.ts";
import type { Manifest } from "./manifest.ts";

export class ExcludeFileError extends UserError {}

const MRN = /^[A-Za-z0-9\-.]{1,64}$/;

export const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");
const normalize = (text: string) => text.replace(/\s+/g, " ").trim();
const uniq = (xs: string[]) => [...new Set(xs)].sort();
export const taskKey = (suite: string, taskId: string) => `${suite}/${taskId}`;

/** The file's MRNs, `suite/task_id` of each task (none for MRN lists) and each task's instruction, whitespace collapsed. */
export function readExcludeFile(path: string) {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new ExcludeFileError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const text = utf8Text(bytes, path, ExcludeFileError);
  const head = text.trimStart();
  let mrns: string[];
  let tasks: string[] = [];
  let instructions: string[] = [];
  if (head.startsWith("[") || head.startsWith("{")) {
    try {
      const parsed = parseTaskFile(text, { source: path });
      mrns = parsed.flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : []));
      tasks = parsed.map((t) => taskKey(t.suite, t.id));
      instructions = parsed.map((t) => normalize(t.instruction)).filter((s) => s.length >= 20);
    } catch (err) {
      if (err instanceof TaskFileError) throw new ExcludeFileError(err.message);
      throw err;
    }
  } else {
    mrns = [];
    text.split("\n").forEach((raw, i) => {
      const line = raw.replace(/#.*/, "").trim();
      if (!line) return;
      if (!MRN.test(line)) throw new ExcludeFileError(`${path}:${i + 1}: not an MRN: ${JSON.stringify(line)}`);
      mrns.push(line);
    });
  }
  if (!mrns.length && !tasks.length) throw new ExcludeFileError(`${path}: names no patient or task (expected a task file or an MRN list)`);
  return { path, sha256: sha256(bytes), mrns: uniq(mrns), tasks: uniq(tasks), instructions: uniq(instructions) };
}

export type ExcludeSource = ReturnType<typeof readExcludeFile>;

/** What a manifest records of the held-out set: file names and hashes, never paths or texts. */
export type HeldOutRecord = Manifest["held_out"];

export function heldOutRecord(sources: ExcludeSource[]): HeldOutRecord {
  return {
    files: sources.map((s) => ({ file: basename(s.path), sha256: s.sha256, patients: s.mrns.length, tasks: s.tasks.length })).sort((a, b) => (a.file + a.sha256 < b.file + b.sha256 ? -1 : 1)),
    mrn_sha256: uniq(sources.flatMap((s) => s.mrns.map((m) => sha256(m)))),
    task_sha256: uniq(sources.flatMap((s) => s.tasks.map((t) => sha256(t)))),
  };
}

export interface RowForHeldOut {
  suite: string;
  task_id: string;
  patient: string;
  messages: readonly { role: string; content?: string | null; tool_calls?: readonly { function: { arguments: unknown } }[] }[];
}

/** Why a row is held out ("patient X", "task Y", "instruction of task Y"), or undefined. */
export class HeldOut {
  private readonly mrns: Set<string>;
  private readonly tasks: Set<string>;
  private readonly instructions: string[];
  /** Hashed sets (from a manifest): values are compared by their sha256. */
  private readonly hashed: { mrns: Set<string>; tasks: Set<string> } | undefined;

  constructor(readonly sources: ExcludeSource[], record?: Pick<HeldOutRecord, "mrn_sha256" | "task_sha256">) {
    this.mrns = new Set(sources.flatMap((s) => s.mrns));
    this.tasks = new Set(sources.flatMap((s) => s.tasks));
    this.instructions = [...new Set(sources.flatMap((s) => s.instructions))];
    this.hashed = record && (record.mrn_sha256.length || record.task_sha256.length) ? { mrns: new Set(record.mrn_sha256), tasks: new Set(record.task_sha256) } : undefined;
  }

  get empty(): boolean {
    return !this.mrns.size && !this.tasks.size && !this.hashed;
  }

  private isMrn(token: string): boolean {
    return this.mrns.has(token) || (this.hashed !== undefined && /\d/.test(token) && this.hashed.mrns.has(sha256(token)));
  }

  hit(row: RowForHeldOut): string | undefined {
    if (this.empty) return undefined;
    const key = taskKey(row.suite, row.task_id);
    if (this.tasks.has(key) || this.hashed?.tasks.has(sha256(key))) return `evaluation task ${key}`;
    if (row.patient && this.isMrn(row.patient)) return `held-out patient ${row.patient}`;
    if (this.instructions.length) {
      const firstAssistant = row.messages.findIndex((m) => m.role === "assistant");
      const prompt = normalize(row.messages.slice(0, firstAssistant < 0 ? undefined : firstAssistant).flatMap((m) => (m.role === "user" || m.role === "system") && m.content ? [m.content] : []).join(" "));
      for (const instruction of this.instructions) if (prompt.includes(instruction)) return `the instruction of an evaluation task ("${instruction.slice(0, 60)}…")`;
    }
    for (const m of row.messages) {
      const texts = [m.content ?? "", ...(m.tool_calls ?? []).map((c) => (typeof c.function.arguments === "string" ? c.function.arguments : JSON.stringify(c.function.arguments)))];
      for (const text of texts)
        for (const match of text.matchAll(/[A-Za-z0-9][A-Za-z0-9\-.]*/g)) {
          const token = match[0].replace(/\.+$/, "");
          if (this.isMrn(token)) return `held-out patient ${token}`;
        }
    }
    return undefined;
  }
}
