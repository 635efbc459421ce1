// A run against OpenAI without its key stops at once with one line naming the variable: exit 2,
// before the population loads or any episode runs, no output file, no request sent.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const BIN = join(PROJECT_ROOT, "bin", "ehrgym.js");
const dir = mkdtempSync(join(tmpdir(), "ehrgym-missing-key-"));

function run(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  delete base.OPENAI_API_KEY;
  delete base.OPENAI_BASE_URL;
  return spawnSync(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, encoding: "utf8", env: { ...base, ...env } });
}

describe("the key a remote endpoint needs, missing", () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ["eval on the default endpoint", ["eval", "--policy", "openai", "--model", "gpt-4o-mini"], {}, /^ehrgym: \$OPENAI_API_KEY is not set: OpenAI \(the default endpoint; --base-url names another\) needs an API key/],
    ["rollout with --base-url https://api.openai.com/v1", ["rollout", "--model", "gpt-4o-mini", "--base-url", "https://api.openai.com/v1"], {}, /^ehrgym: \$OPENAI_API_KEY is not set: https:\/\/api\.openai\.com\/v1 needs an API key/],
    ["eval with $OPENAI_BASE_URL and --api-key-env", ["eval", "--policy", "openai", "--model", "gpt-4o-mini", "--api-key-env", "MY_KEY"], { OPENAI_BASE_URL: "https://api.openai.com/v1" }, /^ehrgym: \$MY_KEY is not set: https:\/\/api\.openai\.com\/v1 needs/],
  ];
  it.each(cases)("%s: one line, exit 2, nothing written", (name, args, env, message) => {
    const out = join(dir, `${name.replace(/\W+/g, "-")}.jsonl`);
    const r = run([...args, "--patients", "2", "--per-type", "1", "--out", out], env);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stdout).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it("a local endpoint needs no key: the run starts, and stops on the unreachable endpoint instead", () => {
    // Port 9 on loopback: nothing listens, so the first request fails at once, offline.
    const r = run(["eval", "--policy", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0", "--patients", "2", "--per-type", "1", "--limit", "1", "--no-progress", "--out", join(dir, "local.jsonl")]);
    expect(r.stderr).not.toMatch(/is not set/);
    expect(r.stderr).toMatch(/^loaded [\d,]+ resources/m);
    expect(r.stderr).toMatch(/connection failed/);
  });
});
