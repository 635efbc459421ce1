// The `ehrgym` command as users run it: the compiled bin (`node bin/ehrgym.js`, the README's form),
// its help and version, and its servers stopping on SIGTERM/SIGINT sent to the PID a shell's `&`
// gives, npm's included (`npm run ehrgym --`; never `npx ehrgym`, which in this folder rebuilds dist/).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/shared.ts";
import { world } from "./rollout/teacher-world.ts";

const BIN = join(PROJECT_ROOT, "bin", "ehrgym.js");
const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** Starts a server command; resolves with the URL it prints on stdout. */
function start(command: string, args: string[]): Promise<{ child: ChildProcess; url: string; exited: Promise<void> }> {
  const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once("close", () => r()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
      if (url) resolve({ child, url, exited });
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${stderr}`)));
  });
}

/** Resolves once nothing listens at `url` any more (the test's timeout bounds the wait). */
async function stopsAnswering(url: string): Promise<void> {
  for (;;) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
    } catch (e) {
      if ((e as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("ehrgym CLI", () => {
  it("prints help naming every command with the description its module gives, and exits 0", () => {
    const r = cli("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: ehrgym");
    const names = [...r.stdout.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!);
    expect(names).toEqual(["fhir", "ehr", "tasks", "eval", "serve", "rollout", "teacher", "dataset", "report", "help"]);
    const flat = (s: string) => s.replace(/\s+/g, " ");
    for (const name of names.slice(0, -1)) {
      const own = cli(name, "--help");
      expect(own.status).toBe(0);
      const description = flat(own.stdout.split("\n\n")[1]!).trim();
      expect(flat(r.stdout)).toContain(` ${name} ${description}`);
    }
  });

  it("--version and -V print the package's version", () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const r = cli(flag);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it("rejects an unknown command with exit code 2", () => {
    const r = cli("no-such-command");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command/);
  });

  it("`node bin/ehrgym.js teacher serve ... &` then `kill $!` or `kill -INT $!` stops the server", async () => {
    const { tasks } = world({ patients: 3, seed: 5, perType: 1 });
    const tasksFile = join(mkdtempSync(join(tmpdir(), "ehrgym-cli-")), "tasks.jsonl");
    writeFileSync(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const { child, url, exited } = await start(process.execPath, [BIN, "teacher", "serve", "--port", "0", "--tasks", tasksFile]);
      expect((await fetch(`${url}/v1/models`)).status).toBe(200);
      child.kill(signal);
      await stopsAnswering(url);
      await exited;
    }
  });

  // npm's PID: npm passes the signal to a shell (`sh -c`) that does not pass it on.
  it("`npm run ehrgym -- serve ... &` then `kill -INT $!` stops the server", async () => {
    const serve = await start("npm", ["run", "--silent", "ehrgym", "--", "serve", "--port", "0", "--patients", "2", "--per-type", "1"]);
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    serve.child.kill("SIGINT");
    await stopsAnswering(serve.url);
    await serve.exited;
  });

  it("`npm run ehrgym -- serve` stops on SIGTERM to npm's PID; `fhir serve` on SIGINT (Ctrl-C) to the command's", async () => {
    const serve = await start("npm", ["run", "--silent", "ehrgym", "--", "serve", "--port", "0", "--patients", "2", "--per-type", "1"]);
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    serve.child.kill("SIGTERM");
    await stopsAnswering(serve.url);
    await serve.exited;

    // Ctrl-C signals every process of the terminal's foreground group, the command's own included.
    const fhir = await start(process.execPath, [BIN, "fhir", "serve", "--port", "0", "--patients", "2", "--synthetic"]);
    expect((await fetch(`${fhir.url}/fhir/metadata`)).status).toBe(200);
    fhir.child.kill("SIGINT");
    await fhir.exited;
    expect(fhir.child.exitCode).toBe(0);
    await stopsAnswering(fhir.url);
  });
});
