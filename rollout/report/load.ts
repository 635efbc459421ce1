// Reading run files for a report: every line must be an EpisodeRow (a bad one is named by
// file:line), one row per (suite, task_id, sample), one protocol per run unless one is chosen.
import { readFileSync } from "node:fs";
import { EpisodeRow, keyOf } from "../row.ts";
import { UserError, utf8Text } from "../../env/util/index.ts";

/** Input a report cannot be built from: one line for the user, exit code 2 at the CLI. */
export class ReportInputError extends UserError {}

const describeValue = (v: unknown) => {
  const text = JSON.stringify(v);
  return text === undefined ? String(v) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

function valueAt(obj: unknown, path: PropertyKey[]): unknown {
  let cur = obj;
  for (const key of path) cur = cur && typeof cur === "object" ? (cur as Record<PropertyKey, unknown>)[key] : undefined;
  return cur;
}

/** The run's rows; `tornLastLine`: a half-written last line (interrupted run) was skipped; `otherProtocolRows`: rows left out by the `protocol` choice. */
export function loadRun(path: string, name: string, options: { protocol?: "text" | "tools" } = {}) {
  let text: string;
  try {
    text = utf8Text(readFileSync(path), path, ReportInputError);
  } catch (err) {
    if (err instanceof ReportInputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ReportInputError(`cannot read run file ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (err as Error).message}`);
  }
  const lines = text.split("\n");
  const rows: EpisodeRow[] = [];
  const seen = new Map<string, number>();
  let tornLastLine = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const where = `${path}:${i + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // Only an unterminated last line can be a write cut short; anything else is corruption.
      if (i === lines.length - 1 && !text.endsWith("\n")) {
        tornLastLine = true;
        continue;
      }
      throw new ReportInputError(`${where}: not a JSON line`);
    }
    const checked = EpisodeRow.safeParse(parsed);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const field = issue.path.length > 0 ? issue.path.join(".") : "(row)";
      throw new ReportInputError(`${where}: not an episode row: ${field}: ${issue.message} (got ${describeValue(valueAt(parsed, issue.path))})`);
    }
    const row = checked.data;
    const key = keyOf(row);
    const first = seen.get(key);
    if (first !== undefined) throw new ReportInputError(`${where}: a second row for ${row.suite} ${row.task_id} sample ${row.sample} (the first is line ${first})`);
    seen.set(key, i + 1);
    rows.push(row);
  }
  if (rows.length === 0) throw new ReportInputError(`run file ${path} has no episode rows${tornLastLine ? " (only a half-written line)" : ""}`);
  const byProtocol = new Map<string, number>();
  for (const row of rows) byProtocol.set(row.protocol, (byProtocol.get(row.protocol) ?? 0) + 1);
  let kept = rows;
  if (options.protocol) {
    kept = rows.filter((r) => r.protocol === options.protocol);
    if (kept.length === 0) throw new ReportInputError(`run file ${path} has no rows of protocol ${options.protocol} (it has ${[...byProtocol].map(([p, n]) => `${p} ${n}`).join(", ")})`);
  } else if (byProtocol.size > 1) {
    throw new ReportInputError(
      `run file ${path} mixes protocols (${[...byProtocol].map(([p, n]) => `${p} ${n} rows`).join(", ")}); their rates are not comparable: pass --protocol text or --protocol tools`,
    );
  }
  return { name, path, rows: kept, tornLastLine, otherProtocolRows: rows.length - kept.length };
}
export type LoadedRun = ReturnType<typeof loadRun>;
