// `ehrgym serve` as a real child process: starts on port 0, serves generated tasks behind a token,
// stops cleanly on SIGTERM; bad flags exit 2 naming the flag. Stopping waits for requests in flight,
// not for idle open episodes, and a second signal stops at once.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const CLI = ["--import", "tsx", "scripts/cli.ts"];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

function startServe(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; tasks: number; stderr: () => string }> {
  const child = spawn(process.execPath, [...CLI, "serve", ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const ready = JSON.parse(line) as { url: string; tasks: number };
      resolve({ child, ...ready, stderr: () => stderr });
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

describe("ehrgym serve", () => {
  it("serves generated tasks over the synthetic EHR behind $EHRGYM_TOKEN and stops on SIGTERM", async () => {
    const { child, url, tasks } = await startServe(["--port", "0", "--patients", "3", "--per-type", "1", "--replica-id", "cli7"], { EHRGYM_TOKEN: "tok" });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(tasks).toBeGreaterThan(0);
    const auth = { Authorization: "Bearer tok", "Content-Type": "application/json" };
    expect((await fetch(`${url}/v1/tasks`)).status).toBe(401);
    const list = (await (await fetch(`${url}/v1/tasks`, { headers: auth })).json()) as { total: number; tasks: Array<{ id: string; suite: string }> };
    expect(list.total).toBe(tasks);
    expect(new Set(list.tasks.map((t) => t.suite))).toEqual(new Set(["mab-v1", "mab-v2"]));
    const created = await fetch(`${url}/v1/episodes`, { method: "POST", headers: auth, body: JSON.stringify({ task_id: list.tasks[0]!.id }) });
    const episode = (await created.json()) as { episode_id: string };
    expect(episode.episode_id).toMatch(/^cli7-/);
    const step = await fetch(`${url}/v1/episodes/${episode.episode_id}/step`, { method: "POST", headers: auth, body: JSON.stringify({ action: "hello" }) });
    expect(await step.json()).toMatchObject({ reward: 0, terminated: true, info: { status: "invalid_action" } });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits 2 naming the bad flag", () => {
    for (const [args, flag] of [
      [["--port", "http"], "--port"],
      [["--data", "/no/such/dir"], "--data"],
      [["--max-episodes", "0"], "--max-episodes"],
      [["--replica-id", "a-b"], "--replica-id"],
    ] as const) {
      const r = spawnSync(process.execPath, [...CLI, "serve", ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(flag);
    }
  });
});

const SERVE = ["--port", "0", "--patients", "3", "--per-type", "1", "--drain-timeout", "3600"];
const exitOf = (child: ChildProcess) => new Promise<number | null>((r) => child.once("exit", (code) => r(code)));

async function openEpisode(url: string): Promise<string> {
  const list = (await (await fetch(`${url}/v1/tasks?limit=1`)).json()) as { tasks: Array<{ id: string }> };
  const created = await fetch(`${url}/v1/episodes`, { method: "POST", body: JSON.stringify({ task_id: list.tasks[0]!.id }) });
  return ((await created.json()) as { episode_id: string }).episode_id;
}

const inFlight = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as { requests_in_flight: number }).requests_in_flight;

/** A step whose body is only partly sent: a request in flight until `rest()`. */
function stepInFlight(url: string, id: string) {
  const body = JSON.stringify({ action: "hello" });
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  socket.on("error", () => undefined);
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  const reply = new Promise<string>((resolve) => socket.on("close", () => resolve(text)));
  socket.write(`POST /v1/episodes/${id}/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 3)}`);
  return { reply, rest: () => socket.write(body.slice(3)) };
}

describe("stopping ehrgym serve", () => {
  it("Ctrl-C with one idle open episode stops without waiting for it (issue 37 probe)", async () => {
    const { child, url } = await startServe(SERVE);
    await openEpisode(url);
    const exited = exitOf(child);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("answers the request in flight before it stops; a second Ctrl-C stops at once", async () => {
    const graceful = await startServe(SERVE);
    const step = stepInFlight(graceful.url, await openEpisode(graceful.url));
    const exited = exitOf(graceful.child);
    await expect.poll(() => inFlight(graceful.url)).toBe(1);
    graceful.child.kill("SIGINT");
    await expect.poll(() => graceful.stderr()).toMatch(/finishing 1 request\(s\) in flight/);
    step.rest();
    expect(await step.reply).toMatch(/^HTTP\/1\.1 200[\s\S]*"terminated":true/);
    expect(await exited).toBe(0);

    const forced = await startServe(SERVE);
    const stuck = stepInFlight(forced.url, await openEpisode(forced.url));
    const stopped = exitOf(forced.child);
    await expect.poll(() => inFlight(forced.url)).toBe(1);
    forced.child.kill("SIGINT");
    await expect.poll(() => forced.stderr()).toMatch(/finishing 1 request/);
    forced.child.kill("SIGINT");
    expect(await stopped).toBe(130);
    expect(await stuck.reply).toBe("");
    expect(forced.stderr()).toContain("again: stopping now");
  });
});
