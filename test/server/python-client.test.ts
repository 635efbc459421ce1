// The Python client (scripts/python/ehrgym_client.py) end to end against a live reward server,
// over JSON and over MessagePack.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";
import { EXAMPLES, jsonLines, PYTHON, PYTHON_MSGPACK, runClient } from "./python.ts";

if (!PYTHON) throw new Error("python3 is required for the Python client test (install python3)");
const python = PYTHON;

let server: RewardServer;
let url: string;
let dir: string;
const TOKEN = "py-token";

beforeAll(async () => {
  server = createRewardServer({ backend: fixtureBackend(), token: TOKEN });
  url = await server.listen(0);
  dir = mkdtempSync(join(tmpdir(), "ehrgym-py-"));
  const episodes = fixtureTasks.map((t, i) => ({
    task_id: t.id,
    protocol: "text",
    turns: ["GET http://localhost:8080/fhir/Patient?name=x", i % 2 === 0 ? `FINISH(${JSON.stringify(t.sol)})` : "FINISH([\"wrong\"])", "GET never-sent"],
  }));
  writeFileSync(join(dir, "episodes.json"), JSON.stringify(episodes));
  writeFileSync(
    join(dir, "transcripts.json"),
    JSON.stringify(fixtureTasks.map((t) => ({ task_id: t.id, messages: [{ role: "user", content: "p" }, { role: "assistant", content: `FINISH(${JSON.stringify(t.sol)})` }] }))),
  );
});
afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function suite(format: "json" | "msgpack", interpreter: string) {
  const base = () => ["--url", url, "--token", TOKEN, "--format", format];

  it(`health reports the wire format (${format})`, async () => {
    const r = await runClient(interpreter, [...base(), "health"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ ok: true, client_format: format, tasks: fixtureTasks.length });
  });

  it(`plays episodes to the end and gets the rewards (${format})`, async () => {
    const r = await runClient(interpreter, [...base(), "run", join(dir, "episodes.json")]);
    expect(r.stderr).toBe("");
    const lines = jsonLines(r.stdout);
    expect(lines.map((l) => l.reward)).toEqual(fixtureTasks.map((_, i) => (i % 2 === 0 ? 1 : 0)));
    for (const l of lines) {
      expect(l).toMatchObject({ status: "completed", done: true, state_done: true, steps: 2, terminated: true });
      expect(l.messages).toBe(4);
      expect(l.episode_id).toMatch(/^r0-/);
    }
  });

  it(`scores transcripts (${format})`, async () => {
    const r = await runClient(interpreter, [...base(), "score", join(dir, "transcripts.json")]);
    expect(jsonLines(r.stdout).map((l) => [l.reward, l.replayed_turns])).toEqual(fixtureTasks.map(() => [1, 1]));
  });

  it(`maps error replies to EhrGymError with status and field (${format})`, async () => {
    const r = await runClient(interpreter, [...base(), "errors", "--task-id", fixtureTasks[0]!.id]);
    expect(r.stderr).toBe("");
    expect(jsonLines(r.stdout)[0]).toEqual({
      unknown_episode: { status: 404, field: "episode_id" },
      unknown_task: { status: 400, field: "task_id" },
      bad_protocol: { status: 400, field: "protocol" },
      bad_step_body: { status: 400, field: "act" },
      finished_episode: { status: 409, field: "episode_id" },
      deleted_episode: { status: 404, field: "episode_id" },
    });
  });
}

describe("python client over JSON", () => {
  suite("json", python);

  it("fails cleanly with a wrong token (exit 1, HTTP 401 on stderr)", async () => {
    const r = await runClient(python, ["--url", url, "--token", "nope", "--format", "json", "tasks"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("HTTP 401");
  });
});

describe("python examples (dry runs with a scripted policy)", () => {
  const task = fixtureTasks[0]!;
  const turns = JSON.stringify(["GET http://localhost:8080/fhir/Patient?name=x", `FINISH(${JSON.stringify(task.sol)})`]);
  const env = { EHRGYM_TOKEN: TOKEN };

  it("TRL GRPO: a concurrent group of rollouts and the score-based reward function agree", async () => {
    const r = await runClient(python, ["--url", url, "--dry-run", "--task-id", task.id, "--turns", turns, "--group-size", "3"], join(EXAMPLES, "trl_grpo.py"), env);
    expect(r.stderr).toBe("");
    expect(jsonLines(r.stdout)[0]).toEqual({ task_id: task.id, rollout_rewards: [1, 1, 1], statuses: ["completed", "completed", "completed"], score_rewards: [1, 1, 1] });
  });

  it("verifiers-style environment: rollout through an OpenAI-shaped client", async () => {
    const r = await runClient(python, ["--url", url, "--dry-run", "--task-id", task.id, "--turns", turns], join(EXAMPLES, "verifiers_env.py"), env);
    expect(r.stderr).toBe("");
    expect(jsonLines(r.stdout)[0]).toEqual({ reward: 1, status: "completed", completion_messages: 3 });
  });
});

const msgpackTitle = PYTHON_MSGPACK
  ? "python client over MessagePack"
  : "python client over MessagePack [skipped: python3 -c \"import msgpack\" fails; install python3-msgpack]";
describe.skipIf(!PYTHON_MSGPACK)(msgpackTitle, () => {
  suite("msgpack", PYTHON_MSGPACK ?? python);
});
