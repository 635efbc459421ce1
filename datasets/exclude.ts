// --exclude-mrns-from: the patients of evaluation files, never to appear in training data.
// Accepts official task files (JSON array), ehrgym task files (JSONL) and MRN lists (one per line, # comments).
import { readFileSync } from "node:fs";
import { parseTaskFile, TaskFileError } from "../env/tasks/index.ts";
import type { Text } from "./rowline.ts";

export class ExcludeFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExcludeFileError";
  }
}

const MRN = /^[A-Za-z0-9\-.]{1,64}$/;

export interface ExcludeSource {
  path: string;
  mrns: string[];
}

export function readExcludeFile(path: string): ExcludeSource {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ExcludeFileError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const head = text.trimStart();
  let mrns: string[];
  if (head.startsWith("[") || head.startsWith("{")) {
    try {
      mrns = parseTaskFile(text, { source: path }).flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : []));
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
  if (!mrns.length) throw new ExcludeFileError(`${path}: names no patient (expected a task file with eval_MRN or an MRN list)`);
  return { path, mrns: [...new Set(mrns)].sort() };
}

/**
 * Whether a row touches a held-out patient: its own MRN, or any MRN-shaped token of its transcript
 * (rows without an `mrn` field, and lookups whose answer is a held-out MRN, are caught that way).
 */
export class HeldOut {
  readonly mrns: Set<string>;
  constructor(readonly sources: ExcludeSource[]) {
    this.mrns = new Set(sources.flatMap((s) => s.mrns));
  }
  get size(): number {
    return this.mrns.size;
  }
  /** The first held-out MRN the row touches, or undefined. */
  hit(patient: string, texts: Iterable<Text | null>): string | undefined {
    if (!this.mrns.size) return undefined;
    if (patient && this.mrns.has(patient)) return patient;
    for (const text of texts) {
      if (!text) continue;
      // A long text's parts are cut where no MRN-shaped token runs across (rowline.ts).
      for (const part of typeof text === "string" ? [text] : text.parts) {
        for (const m of part.matchAll(/[A-Za-z0-9][A-Za-z0-9\-.]*/g)) {
          const token = m[0].replace(/\.+$/, "");
          if (this.mrns.has(token)) return token;
        }
      }
    }
    return undefined;
  }
}
