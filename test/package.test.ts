import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Runs an ES module in a child Node process at the project root, so `ehrgym/...` resolves through
 *  the package's own `exports` (self-reference), the way a program that installed it would. */
function runModule(code: string): string {
  return execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The README's "Library use" example (TypeScript). */
function readmeExample(): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  return /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("## Library use")))![1]!;
}

describe("the package entries", () => {
  it("resolves ehrgym, ehrgym/core, ehrgym/fhir, ehrgym/rollout and ehrgym/datasets by package name", () => {
    const out = runModule(`
      const names = {};
      for (const entry of ["ehrgym", "ehrgym/core", "ehrgym/fhir", "ehrgym/rollout", "ehrgym/datasets"])
        names[entry] = Object.keys(await import(entry));
      console.log(JSON.stringify(names));
    `);
    const names = JSON.parse(out) as Record<string, string[]>;
    expect(names["ehrgym"]).toEqual(expect.arrayContaining(["MedAgentEnv", "EnvConfig", "generateStore", "generateTasks"]));
    expect(names["ehrgym/core"]).toEqual(expect.arrayContaining(["MedAgentEnv", "EnvConfig", "runEpisode"]));
    expect(names["ehrgym/fhir"]).toEqual(expect.arrayContaining(["createStoreBuilder", "FhirService"]));
    expect(names["ehrgym/rollout"]).toEqual(expect.arrayContaining(["runEpisodes", "createExpertPolicy"]));
    expect(names["ehrgym/datasets"]).toContain("buildDataset");
  });

  it("runs the README's Library use example as written, by package name", () => {
    const code = readmeExample().replace(/!(?=[,)\]])/g, ""); // TypeScript's non-null marks, for plain Node
    expect(code).toMatch(/from "ehrgym"/);
    const out = runModule(code).trim();
    expect(out).toBe(/\/\/ (.*)$/m.exec(readmeExample())![1]);
  });

  it("does not publish the internals: a deep import is refused", () => {
    expect(() => runModule(`await import("ehrgym/env/util/index.ts");`)).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it("type-checks the README example as a TypeScript program that installed the package, with a plain NodeNext config (the declarations in dist/)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ehrgym-consumer-"));
    try {
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(ROOT, join(dir, "node_modules", "ehrgym"), "dir");
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
      const compilerOptions = { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["main.ts"] }));
      const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
      const check = (body: string) => {
        writeFileSync(join(dir, "main.ts"), `${readmeExample()}\n${body}\n`);
        return spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
      };
      const good = check("export {};");
      expect(good.stdout + good.stderr).toBe("");
      expect(good.status).toBe(0);
      // The declarations are real types, not `any`: a misuse is an error naming the package's type.
      const bad = check("export const n: number = generateStore;");
      expect(bad.status).not.toBe(0);
      expect(bad.stdout).toMatch(/GeneratedStore.*not assignable to type 'number'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
