// Starts test/server/fixture-serve.ts as a child process; `alive()` tells whether it still runs.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { PROJECT_ROOT } from "../helpers/shared.ts";

export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** What the child wrote on stderr (a crash's stack). */
  stderr(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

export function startChildServer(options: Record<string, unknown> = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/server/fixture-serve.ts", JSON.stringify(options)], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const { url } = JSON.parse(line) as { url: string };
      resolve({
        child,
        url,
        stderr: () => stderr,
        alive: () => child.exitCode === null && child.signalCode === null,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGKILL");
          }),
      });
    });
    child.once("exit", (code) => reject(new Error(`fixture server exited with ${code}: ${stderr}`)));
  });
}
