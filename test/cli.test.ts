import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { encoding: "utf8" });

describe("ehrgym CLI", () => {
  it("prints help and exits 0", () => {
    const r = cli("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: ehrgym");
  });

  it("rejects an unknown command with exit code 2", () => {
    const r = cli("no-such-command");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/error/);
  });
});
