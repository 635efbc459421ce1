// Loading task files: the official MedAgentBench JSON arrays and ehrgym JSONL task files.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { gradingClock } from "./clock.ts";
import { Suite, Task, TaskType } from "./task.ts";
import { UserError, utf8Text } from "../util/index.ts";

/** One row of a task file: official rows carry id/instruction/context/eval_MRN(/sol); ehrgym rows carry every Task field. */
const TaskRow = z.looseObject({
  id: z.string().min(1),
  instruction: z.string(),
  context: z.string().optional(),
  eval_MRN: z.string().optional(),
  sol: z.array(z.unknown()).optional(),
  suite: Suite.optional(),
  type: TaskType.optional(),
  clock: z.string().optional(),
  branch: z.string().optional(),
  rules: z.array(z.string()).optional(),
  max_rounds: z.number().optional(),
});
type TaskRow = z.infer<typeof TaskRow>;

export class TaskFileError extends UserError {}

/** The task type an id names: "task5_12" -> "task5", "v2_task9_3" -> "v2_task9", "mab-v1/task5/7-3" -> "task5". */
export function typeFromId(id: string): string | undefined {
  const m = /(?:^|\/)((?:v2_)?task\d+)(?:[_/]|$)/.exec(id);
  return m?.[1];
}

/** mab-v2 (new_patient_tasks) when every instruction starts with "Instruction:" and no row has a sol; else mab-v1. */
export function detectSuite(rows: readonly { instruction: string; sol?: unknown }[]): Suite {
  const v2 = rows.length > 0 && rows.every((r) => r.instruction.startsWith("Instruction:") && r.sol === undefined);
  return v2 ? "mab-v2" : "mab-v1";
}

function parseRows(text: string, source: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new TaskFileError(`${source}: expected a JSON array of tasks`);
      return parsed;
    } catch (e) {
      if (e instanceof TaskFileError) throw e;
      throw new TaskFileError(`${source}: invalid JSON: ${(e as Error).message}`);
    }
  }
  const rows: unknown[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      rows.push(JSON.parse(line));
    } catch (e) {
      throw new TaskFileError(`${source}:${i + 1}: invalid JSON line: ${(e as Error).message}`);
    }
  });
  return rows;
}

/** Parse task-file text (a JSON array or JSONL) into validated Tasks. */
export function parseTaskFile(text: string, opts: { suite?: Suite; source?: string } = {}): Task[] {
  const source = opts.source ?? "tasks";
  const raw = parseRows(text, source);
  const rows: TaskRow[] = raw.map((r, i) => {
    const res = TaskRow.safeParse(r);
    if (!res.success) {
      const issue = res.error.issues[0]!;
      throw new TaskFileError(`${source}: task #${i + 1}: field ${issue.path.join(".") || "(row)"}: ${issue.message}`);
    }
    return res.data;
  });
  const detected = opts.suite ?? detectSuite(rows.filter((r) => r.suite === undefined));
  const seen = new Set<string>();
  return rows.map((r, i) => {
    const suite = r.suite ?? detected;
    const type = r.type ?? typeFromId(r.id);
    if (!type) throw new TaskFileError(`${source}: task #${i + 1}: field id: cannot tell the task type from "${r.id}" (expected a taskN prefix)`);
    const key = `${suite}\u0000${r.id}`;
    if (seen.has(key)) throw new TaskFileError(`${source}: task #${i + 1}: field id: duplicate id "${r.id}"`);
    seen.add(key);
    const context = r.context ?? "";
    const task = Task.safeParse({
      id: r.id,
      suite,
      type,
      instruction: r.instruction,
      context,
      eval_MRN: r.eval_MRN,
      sol: r.sol,
      clock: r.clock ?? gradingClock(suite, context),
      branch: r.branch,
      rules: r.rules,
      max_rounds: r.max_rounds,
    });
    if (!task.success) {
      const issue = task.error.issues[0]!;
      throw new TaskFileError(`${source}: task #${i + 1}: field ${issue.path.join(".")}: ${issue.message}`);
    }
    return task.data;
  });
}

/** Load a task file (official JSON array or ehrgym JSONL); the suite is auto-detected unless given. */
export function loadTaskFile(path: string, opts: { suite?: Suite } = {}): Task[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new TaskFileError(`cannot read task file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const text = utf8Text(bytes, path, TaskFileError);
  return parseTaskFile(text, { ...opts, source: path });
}
