// The README's `node bin/ehrgym.js ...` synopses against `--help` of the compiled CLI: every command they
// name exists, every flag they name is one of its options, and an optional flag written with a
// literal value (`[--seed 0]`) states the default that --help gives, when --help gives one.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const BIN = join(PROJECT_ROOT, "bin", "ehrgym.js");
const README = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8");

const helpCache = new Map<string, string>();
function help(path: string[]): string {
  const key = path.join(" ");
  let text = helpCache.get(key);
  if (text === undefined) {
    const r = spawnSync(process.execPath, [BIN, ...path, "--help"], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(r.status, `ehrgym ${key} --help: ${r.stderr}`).toBe(0);
    text = r.stdout;
    helpCache.set(key, text);
  }
  return text;
}

/** The entries of a help section ("Options:", "Commands:"), continuation lines joined. */
function section(text: string, title: string): string[] {
  const body = text.split(`\n${title}\n`)[1];
  if (body === undefined) return [];
  const entries: string[] = [];
  for (const line of body.split("\n")) {
    if (line.trim() === "") break;
    if (/^ {2}\S/.test(line)) entries.push(line.trim());
    else entries[entries.length - 1] += ` ${line.trim()}`;
  }
  return entries;
}

/** Option name (`--port`, `--no-cache`) -> the default its help states, "" when none. */
function options(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of section(text, "Options:")) {
    const names = [...entry.split(/\s{2,}/)[0]!.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]);
    const given = /\(default: (?:"([^"]*)"|([^)]*))\)\s*$/.exec(entry);
    const commander = given ? (given[1] ?? given[2]!) : "";
    const stated = (/\bdefault:? ([^\s;)]+)/.exec(entry.replace(/\(default: [^)]*\)\s*$/, ""))?.[1] ?? "").replace(/,$/, "");
    const value = commander && commander !== "[]" && commander !== "false" ? commander : stated;
    for (const name of names) out.set(name, value);
  }
  return out;
}

/** Every `node bin/ehrgym.js ...` of the README: indented code lines with their continuations, and inline code. */
function synopses(): string[] {
  const found: string[] = [];
  const lines = README.split("\n");
  lines.forEach((line, i) => {
    const m = /^ {4}(?:[A-Z_]+=\S+ )*node bin\/ehrgym\.js (.*)$/.exec(line);
    if (!m) return;
    let text = m[1]!;
    for (let j = i + 1; j < lines.length && /^ {8}[[-]/.test(lines[j]!); j++) text += ` ${lines[j]!.trim()}`;
    found.push(text);
  });
  for (const m of README.matchAll(/`(?:[A-Z_]+=\S+ )*node bin\/ehrgym\.js ([^`]*)`/g)) if (!m[1]!.startsWith("<")) found.push(m[1]!);
  return found.map((s) => s.replace(/\s+#.*$/, "").replace(/\\/g, " ").replace(/\s+&$/, "").trim());
}

/** The command path a synopsis names (`fhir serve`, `eval`), from the CLI's own command lists. */
function commandPath(words: string[]): string[] {
  if (words[0]!.startsWith("-")) return [];
  const top = section(help([]), "Commands:").map((e) => e.split(/\s+/)[0]!);
  const path = [words[0]!];
  expect(top, `README names the command "${words[0]}"`).toContain(words[0]);
  const subs = section(help(path), "Commands:").map((e) => e.split(/\s+/)[0]!);
  if (subs.length) {
    expect(subs, `README names the command "${path[0]} ${words[1]}"`).toContain(words[1]);
    path.push(words[1]!);
  }
  return path;
}

interface FlagUse {
  flag: string;
  /** The literal after it, when the flag is inside [ ] (a default the README states). */
  optionalValue?: string;
}

function flagUses(synopsis: string): FlagUse[] {
  const tokens = synopsis.match(/\[|\]|\(|\)|\||[^\s[\]()|]+/g) ?? [];
  // The innermost [ ] or ( ) group of each token, and the groups that hold alternatives (a | b).
  const groupOf: number[] = [];
  const choices = new Set<number>();
  const open: number[] = [-1];
  tokens.forEach((t, i) => {
    if (t === "[" || t === "(") open.push(i);
    else if (t === "]" || t === ")") open.pop();
    else if (t === "|") choices.add(open.at(-1)!);
    groupOf.push(open.at(-1)!);
  });
  const uses: FlagUse[] = [];
  tokens.forEach((t, i) => {
    if (!/^--[a-z]/.test(t)) return;
    const group = groupOf[i]!;
    const next = tokens[i + 1];
    // A default the README states: `[--flag literal]`, alone in its brackets (no alternatives), the
    // literal not a placeholder (N, DIR, FILE...), an ellipsis or a list of choices (text|tools).
    const literal =
      next !== undefined && !/^(?:-|\[|\]|\(|\)|\|)/.test(next) && !/^[A-Z][A-Z0-9_]*(?:\.\.\.)?$/.test(next) && !next.includes("...") && tokens[i + 2] !== "|";
    const optional = group >= 0 && tokens[group] === "[" && !choices.has(group);
    uses.push({ flag: t, ...(optional && literal ? { optionalValue: next } : {}) });
  });
  return uses;
}

describe("README synopses agree with --help", () => {
  const all = synopses();

  it("writes every command in the form that never builds: no `npx ehrgym` to run, no `npm link`", () => {
    for (const line of README.split("\n")) expect(line, "a README command line").not.toMatch(/^ {4}(?:[A-Z_]+=\S+ )*(?:npx ehrgym|npm link)\b/);
    expect(README).not.toMatch(/`(?:[A-Z_]+=\S+ )*npx ehrgym [a-z]/);
  });

  it("finds the synopses of every top-level command", () => {
    const named = new Set(all.map((s) => s.split(/\s+/)[0]));
    for (const c of ["fhir", "ehr", "tasks", "eval", "serve", "rollout", "teacher", "dataset", "report"]) expect(named).toContain(c);
  });

  it.each(all)("node bin/ehrgym.js %s", (synopsis) => {
    const path = commandPath(synopsis.split(/\s+/));
    const known = options(help(path));
    for (const use of flagUses(synopsis)) {
      expect(known.has(use.flag), `\`ehrgym ${path.join(" ")}\` has no ${use.flag} (README: ${synopsis})`).toBe(true);
      const stated = known.get(use.flag);
      if (use.optionalValue !== undefined && stated) expect(use.optionalValue, `default of ${use.flag} of \`ehrgym ${path.join(" ")}\``).toBe(stated);
    }
  });
});
