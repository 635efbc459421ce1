// `ehrgym teacher serve` as a real child process: prints its URL on stdout, serves /v1 behind the key
// named by --api-key-env, stops cleanly on SIGTERM; bad flags exit 2 naming the flag.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";
import { chatBody, firstRequest, MODEL, world } from "./teacher-world.ts";
import type { EnvConfig } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";

const CLI = ["--import", "tsx", "scripts/cli.ts", "teacher", "serve"];
const children: ChildProcess[] = [];
let tasksFile: string;
let config: EnvConfig;
let tasks: Task[];

beforeAll(() => {
  ({ config, tasks } = world({ patients: 6, seed: 41, perType: 1 }));
  tasksFile = join(mkdtempSync(join(tmpdir(), "ehrgym-teacher-")), "tasks.jsonl");
  writeFileSync(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

function start(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; ready: { url: string; models: string[]; tasks: number; stand_in: boolean }; stderr: () => string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve({ child, ready: JSON.parse(line), stderr: () => stderr }));
    child.once("exit", (code) => reject(new Error(`teacher serve exited with ${code}: ${stderr}`)));
  });
}

describe("ehrgym teacher serve", () => {
  it("starts on port 0, says it is a stand-in, answers behind its key, stops on SIGTERM", async () => {
    const { child, ready, stderr } = await start(["--port", "0", "--tasks", tasksFile, "--model", "teacher-x", "--api-key-env", "TEACHER_TEST_KEY", "--seed", "3"], {
      TEACHER_TEST_KEY: "k-123",
    });
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(ready).toMatchObject({ models: ["teacher-x"], tasks: tasks.length, stand_in: true });
    expect(stderr()).toMatch(/STAND-IN/);
    expect(stderr()).toMatch(/NOT a model/);
    const auth = { Authorization: "Bearer k-123", "content-type": "application/json" };
    expect((await fetch(`${ready.url}/models`)).status).toBe(401);
    const models = (await (await fetch(`${ready.url}/models`, { headers: auth })).json()) as { data: { id: string; owned_by: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["teacher-x"]);
    expect(models.data[0]!.owned_by).toMatch(/not a model/);
    const req = await firstRequest(config, tasks[0]!, "text");
    const res = await fetch(`${ready.url}/chat/completions`, { method: "POST", headers: auth, body: JSON.stringify(chatBody(req, "teacher-x")) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await res.json()) as { object: string; choices: { message: { content: string } }[] };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.message.content).toMatch(/^(GET|POST|FINISH)/);
    const wrongModel = await fetch(`${ready.url}/chat/completions`, { method: "POST", headers: auth, body: JSON.stringify(chatBody(req, MODEL)) });
    expect(wrongModel.status).toBe(404);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits 2 naming the bad flag", async () => {
    const cases = [
      [[], "--tasks"],
      [["--tasks", "TASKS", "--error-rate", "1.5"], "--error-rate"],
      [["--tasks", "TASKS", "--faults", "503:0.1"], "--faults"],
      [["--tasks", "TASKS", "--latency-jitter-ms", "-5"], "--latency-jitter-ms"],
      [["--tasks", "TASKS", "--api-key-env", "EHRGYM_TEACHER_UNSET_VARIABLE"], "--api-key-env"],
    ] as const;
    const runs = await Promise.all(
      cases.map(([args]) => {
        const argv = args.map((a) => (a === "TASKS" ? tasksFile : a));
        const child = spawn(process.execPath, [...CLI, ...argv], { cwd: PROJECT_ROOT, env: { ...process.env, EHRGYM_TEACHER_UNSET_VARIABLE: "" }, stdio: ["ignore", "ignore", "pipe"] });
        children.push(child);
        let stderr = "";
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        return new Promise<{ argv: string[]; code: number | null; stderr: string }>((r) => child.once("close", (code) => r({ argv, code, stderr })));
      }),
    );
    runs.forEach((r, i) => {
      expect(r.code, r.argv.join(" ")).toBe(2);
      expect(r.stderr, r.argv.join(" ")).toContain(cases[i]![1]);
    });
  });
});
