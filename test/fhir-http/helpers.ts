// Shared setup for the HTTP tests: a real store from the fixture NDJSON behind a real HTTP server.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { FhirService, createStoreBuilder, loadNdjson, startFhirHttpServer, type FhirHttpServer, type FhirStore } from "../../env/fhir/index.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";
import { writeFixture, type FixtureOptions } from "./fixture.ts";

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `ehrgym-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function loadStore(paths: string[]): Promise<FhirStore> {
  const builder = createStoreBuilder();
  await loadNdjson(paths, builder);
  return builder.build();
}

export async function serveFixture(dir: string, o: FixtureOptions, host = "127.0.0.1"): Promise<{ server: FhirHttpServer; store: FhirStore; file: string }> {
  const file = writeFixture(dir, o);
  const store = await loadStore([file]);
  const server = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }), host });
  return { server, store, file };
}

/** Run the CLI as a child process: `node --import tsx scripts/cli.ts ...args`. */
export function cli(args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function collectOutput(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

export function runCli(args: string[]): Promise<CliResult> {
  return collectOutput(cli(args));
}

/** Start `ehrgym fhir serve ... --port 0` and wait for the URL it prints. */
export async function startCliServer(args: string[]): Promise<{ url: string; child: ChildProcess; stop: () => Promise<CliResult> }> {
  const child = cli(["fhir", "serve", "--port", "0", ...args]);
  const done = collectOutput(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening at (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("close", () => void done.then((r) => reject(new Error(`server exited early (${r.code}): ${r.stderr}`))));
  });
  return {
    url,
    child,
    stop: () => {
      child.kill("SIGTERM");
      return done;
    },
  };
}
