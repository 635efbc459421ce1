// Task generator: instantiates every task type of a suite on any population, balanced across the
// grading branches, deterministic by seed, with MRN hold-out and patient-disjoint splits.
import type { FhirReader } from "../../fhir/index.ts";
import { BranchError, branchOf, branchesOf, isWinnableBranch, taskTypes } from "../branches.ts";
import { defaultClock, gradingClock } from "../clock.ts";
import { Task, type Suite } from "../task.ts";
import { likeTemplates } from "./like.ts";
import { demographics, type Demographics, patientMrns, type Split, splitOf } from "./population.ts";
import { hash32, Rng } from "../../util/index.ts";
import { fill, ownTemplate, SBAR_TEXTS, type Template } from "./wording.ts";
import { generateWorkflowTasks } from "./workflows.ts";

export interface TaskGenerateOptions {
  suite: Suite;
  /** Tasks per task type. */
  perType: number;
  seed?: number;
  /** Restrict to these task types (default: every type of the suite). */
  types?: readonly string[];
  /** The population (default: every Patient of the reader). */
  mrns?: readonly string[];
  /** Held-out MRNs: never used as task patients. */
  excludeMrns?: Iterable<string>;
  /** Keep only patients of this split (a hash of the MRN; disjoint across seeds and runs). */
  split?: Split;
  splitFractions?: readonly [number, number, number];
  /** Official tasks to take the wording from (`like` mode); types without a template use ehrgym's wording. */
  like?: readonly Task[];
  /** Also generate tasks on branches no agent can pass (e.g. v2_task9 without K data); default false. */
  includeUnwinnable?: boolean;
  onProgress?: (done: number, total: number, type: string) => void;
}

export const DEFAULT_SPLIT_FRACTIONS: readonly [number, number, number] = [0.8, 0.1, 0.1];
const NOT_FOUND = "Patient not found";

/** The MRNs tasks may use after hold-out and split selection, sorted. */
export function eligibleMrns(reader: FhirReader, opts: Pick<TaskGenerateOptions, "mrns" | "excludeMrns" | "split" | "splitFractions">): string[] {
  const excluded = new Set(opts.excludeMrns ?? []);
  const fractions = opts.splitFractions ?? DEFAULT_SPLIT_FRACTIONS;
  const all = [...new Set(opts.mrns ?? patientMrns(reader))].sort();
  return all.filter((m) => !excluded.has(m) && (!opts.split || splitOf(m, fractions) === opts.split));
}

function bloodPressure(rng: Rng): string {
  const sys = rng.int(98, 168);
  const dia = rng.int(56, Math.min(104, sys - 25));
  return `${sys}/${dia} mmHg`;
}

/** A name + DOB that matches no patient of the reader (for "Patient not found" lookups). */
function missingPerson(everyone: readonly Demographics[], rng: Rng): { name: string; dob: string } {
  const dobs = new Set(everyone.map((d) => d.birthDate));
  const names = new Set(everyone.map((d) => `${d.given.toLowerCase()} ${d.family.toLowerCase()}`));
  for (let attempt = 0; attempt < 1000; attempt++) {
    const a = rng.pick(everyone);
    const b = rng.pick(everyone);
    const name = `${a.given} ${b.family}`;
    const base = new Date(`${rng.pick(everyone).birthDate}T00:00:00Z`);
    base.setUTCDate(base.getUTCDate() + rng.int(-400, 400));
    const dob = base.toISOString().slice(0, 10);
    if (!dobs.has(dob) && !names.has(name.toLowerCase())) return { name, dob };
  }
  throw new Error("could not invent a name + DOB absent from the population");
}

/** Split `total` tasks over the branches that have patients: equal shares, the remainder to a seeded choice. */
function allocate(branches: readonly string[], total: number, rng: Rng): Map<string, number> {
  const out = new Map<string, number>();
  const base = Math.floor(total / branches.length);
  for (const b of branches) out.set(b, base);
  for (const b of rng.shuffle([...branches]).slice(0, total - base * branches.length)) out.set(b, out.get(b)! + 1);
  return out;
}

interface Slot {
  branch: string;
  mrn?: string;
  person?: { name: string; dob: string };
}

function typeSlots(reader: FhirReader, suite: Suite, type: string, mrns: readonly string[], everyone: readonly Demographics[], perType: number, rng: Rng, includeUnwinnable: boolean): Slot[] {
  const clock = defaultClock(suite, type);
  const groups = new Map<string, string[]>();
  if (suite === "mab-v1" && type === "task1") {
    const key = (d: Demographics) => `${d.given.toLowerCase()}|${d.family.toLowerCase()}|${d.birthDate}`;
    const counts = new Map<string, number>();
    for (const d of everyone) counts.set(key(d), (counts.get(key(d)) ?? 0) + 1);
    const eligible = new Set(mrns);
    groups.set("found", everyone.filter((d) => eligible.has(d.mrn) && counts.get(key(d)) === 1).map((d) => d.mrn));
    if (everyone.length > 0) groups.set("not-found", ["-"]);
  } else {
    for (const mrn of mrns) {
      let branch: string;
      try {
        branch = branchOf(suite, type, reader, mrn, clock);
      } catch (e) {
        if (e instanceof BranchError) continue; // data the official grader cannot grade
        throw e;
      }
      groups.set(branch, [...(groups.get(branch) ?? []), mrn]);
    }
  }
  const available = branchesOf(suite, type).filter(
    (b) => (groups.get(b)?.length ?? 0) > 0 && (includeUnwinnable || isWinnableBranch(suite, type, b)),
  );
  if (available.length === 0) return [];
  const shares = allocate(available, perType, rng);
  const queues = new Map(available.map((b) => [b, rng.shuffle([...groups.get(b)!])]));
  const slots: Slot[] = [];
  // Interleave branches so any prefix of the list is balanced too.
  for (let round = 0; slots.length < perType; round++) {
    for (const b of available) {
      if (round >= shares.get(b)!) continue;
      const q = queues.get(b)!;
      if (b === "not-found") slots.push({ branch: b, person: missingPerson(everyone, rng) });
      else slots.push({ branch: b, mrn: q[round % q.length]! });
    }
  }
  return slots;
}

/** Generate `perType` tasks of every type of a suite on the reader's population. */
export function generateTasks(reader: FhirReader, opts: TaskGenerateOptions): Task[] {
  const seed = opts.seed ?? 1;
  const suite = opts.suite;
  if (!Number.isInteger(opts.perType) || opts.perType < 1) throw new Error(`perType must be a positive integer (got ${opts.perType})`);
  const types = opts.types ? opts.types.filter((t) => taskTypes(suite).includes(t)) : taskTypes(suite);
  const mrns = eligibleMrns(reader, opts);
  if (suite === "workflows") {
    if (!types.includes("review")) return [];
    const tasks = generateWorkflowTasks(reader, { count: opts.perType, seed, mrns });
    opts.onProgress?.(1, 1, "review");
    return tasks;
  }
  const everyone = patientMrns(reader)
    .map((m) => demographics(reader, m))
    .filter((d): d is Demographics => d !== undefined);
  const templates = opts.like ? likeTemplates(opts.like) : new Map<string, Template[]>();
  const tasks: Task[] = [];
  types.forEach((type, ti) => {
    const rng = new Rng((hash32(`${suite}/${type}`) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0, "mulberry32");
    const slots = typeSlots(reader, suite, type, mrns, everyone, opts.perType, rng, opts.includeUnwinnable ?? false);
    const clock = defaultClock(suite, type);
    const pool = (templates.get(`${suite}/${type}`) ?? []).filter((t) => gradingClock(suite, fill(t, { clock }).context) === clock || suite === "mab-v1");
    slots.forEach((slot, i) => {
      const tpl = pool.length ? rng.pick(pool) : ownTemplate(suite, type);
      const who = slot.mrn ? everyone.find((d) => d.mrn === slot.mrn) : undefined;
      const person = slot.person ?? (who ? { name: `${who.given} ${who.family}`, dob: who.birthDate } : undefined);
      const text = fill(tpl, {
        mrn: slot.mrn ?? "",
        clock,
        bp: bloodPressure(rng),
        sbar: rng.pick(SBAR_TEXTS),
        name: person?.name ?? "",
        dob: person?.dob ?? "",
      });
      const isLookup = suite === "mab-v1" && type === "task1";
      tasks.push(
        Task.parse({
          id: `${suite}/${type}/${seed}-${i + 1}`,
          suite,
          type,
          instruction: text.instruction,
          context: text.context,
          ...(slot.mrn ? { eval_MRN: slot.mrn } : {}),
          ...(isLookup ? { sol: [slot.mrn ?? NOT_FOUND] } : {}),
          clock: gradingClock(suite, text.context),
          branch: slot.branch,
        }),
      );
    });
    opts.onProgress?.(ti + 1, types.length, type);
  });
  return tasks;
}
