// Files that choose the population and whose charts to build: a Patient NDJSON (e.g. the 500
// real patients) and task files / MRN lists for --charts-for. Errors name the file and line.
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { FhirResource } from "../fhir/index.ts";
import { at, CLOCK } from "./time.ts";
import { UserError, utf8Text } from "../util/index.ts";

export class EhrInputError extends UserError {}

function read(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new EhrInputError(`cannot read ${path}: ${(err as Error).message}`);
  }
  return utf8Text(bytes, path, EhrInputError);
}

const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;
const PatientLine = z.looseObject({ resourceType: z.literal("Patient"), id: z.string().regex(FHIR_ID, "a FHIR id") });

/** Patient resources, one JSON object per line (blank lines skipped). */
export function readPatientsNdjson(path: string): FhirResource[] {
  const out: FhirResource[] = [];
  const seen = new Set<string>();
  read(path)
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new EhrInputError(`${path}:${i + 1}: not JSON (${(err as Error).message})`);
      }
      const parsed = PatientLine.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new EhrInputError(`${path}:${i + 1}: not a Patient resource: ${issue.path.join(".") || "line"}: ${issue.message}`);
      }
      if (seen.has(parsed.data.id)) throw new EhrInputError(`${path}:${i + 1}: duplicate Patient id ${parsed.data.id}`);
      seen.add(parsed.data.id);
      out.push(json as FhirResource);
    });
  if (!out.length) throw new EhrInputError(`${path}: no Patient resources`);
  return out;
}

const TaskRows = z.array(z.looseObject({ eval_MRN: z.string().regex(FHIR_ID, "a FHIR id").optional(), context: z.string().optional() }));
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?/g;
const DEFAULT_CLOCKS = new Set<number>(Object.values(CLOCK));

/** The "now" a task context states (GRADERS.md: "It's <ISO> now", else the last ISO instant). */
export function contextClock(context: string): string | undefined {
  const stated = /it'?s\s+(\d{4}-\d{2}-\d{2}T[^\s]+?)[.,;]?\s+now/i.exec(context);
  const found = stated?.[1] ?? context.match(ISO)?.at(-1);
  if (!found) return undefined;
  const withZone = /Z|[+-]\d{2}:\d{2}$/.test(found) ? found : `${found}Z`;
  return Number.isNaN(Date.parse(withZone)) ? undefined : withZone;
}

export interface ChartsFor {
  mrns: string[];
  /** Per MRN, task clocks that differ from the suite defaults (e.g. the per-patient V2 task3 clocks). */
  anchors: Record<string, string[]>;
}

/** Task files (JSON arrays with eval_MRN/context) or plain MRN lists (one per line, # comments). */
export function readChartsFor(paths: string[]): ChartsFor {
  const mrns: string[] = [];
  const anchors: Record<string, string[]> = {};
  for (const path of paths) {
    const text = read(path);
    const trimmed = text.trimStart();
    if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new EhrInputError(`${path}: not JSON (${(err as Error).message})`);
      }
      const rows = TaskRows.safeParse(json);
      if (!rows.success) {
        const issue = rows.error.issues[0]!;
        throw new EhrInputError(`${path}: not a task file: [${issue.path.join("].")}: ${issue.message}`);
      }
      for (const row of rows.data) {
        if (!row.eval_MRN) continue;
        mrns.push(row.eval_MRN);
        const clock = row.context ? contextClock(row.context) : undefined;
        if (clock && !DEFAULT_CLOCKS.has(at(clock))) (anchors[row.eval_MRN] ??= []).push(clock);
      }
    } else {
      text.split("\n").forEach((raw, i) => {
        const line = raw.replace(/#.*/, "").trim();
        if (!line) return;
        if (!FHIR_ID.test(line)) throw new EhrInputError(`${path}:${i + 1}: not an MRN: ${JSON.stringify(line)}`);
        mrns.push(line);
      });
    }
  }
  for (const list of Object.values(anchors)) list.sort();
  return { mrns: [...new Set(mrns)], anchors };
}
