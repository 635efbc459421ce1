// A small deterministic backend for testing the HTTP layer in isolation (limits, codecs, errors,
// metrics). It follows the text protocol's turn rules; FINISH earns 1 when the result equals the
// JSON of task.sol. The end-to-end tests use core's MedAgentEnv instead.
import type { AgentTurn, EpisodeEnv, EpisodeInfo, Message, ResetOptions, ResetResult, StepResult } from "../../env/core/index.ts";
import type { ServerBackend } from "../../env/server/index.ts";
import type { Task } from "../../env/tasks/index.ts";

export const fixtureTasks: Task[] = Array.from({ length: 6 }, (_, i) => ({
  id: `task${(i % 3) + 1}_${i + 1}`,
  suite: i < 3 ? "mab-v1" : "mab-v2",
  type: `task${(i % 3) + 1}`,
  instruction: `What is the answer for case ${i + 1}?`,
  context: "",
  sol: [`A${i + 1}`],
}));

export class FixtureEnv implements EpisodeEnv {
  closed = false;
  private info!: EpisodeInfo;
  private task!: Task;
  private maxRounds = 8;
  private protocol: "text" | "tools" = "text";
  private messages: Message[] = [];

  constructor(private readonly onClose?: () => void) {}

  async reset(options: ResetOptions): Promise<ResetResult> {
    if (!options.task) throw new Error("no task");
    if (options.task.instruction === "REFUSE") throw new Error("this task cannot start");
    this.task = options.task;
    this.maxRounds = options.maxRounds ?? 8;
    this.protocol = options.protocol ?? "text";
    this.info = { taskId: this.task.id, status: "running", rounds: 0, invalidActions: 0 };
    this.messages = [{ role: "user", content: `Question: ${this.task.instruction}` }];
    return {
      observation: [...this.messages],
      tools: this.protocol === "tools" ? [{ type: "function", function: { name: "finish", parameters: {} } }] : undefined,
      info: { ...this.info },
    };
  }

  async step(turn: AgentTurn): Promise<StepResult> {
    const text = typeof turn === "string" ? turn : (turn.content ?? "");
    if (text.includes("EXPLODE")) throw new Error("the fixture exploded");
    this.info.rounds++;
    this.messages.push(typeof turn === "string" ? { role: "assistant", content: turn } : turn);
    let reply: Message[] = [];
    let finished: EpisodeInfo["status"] | undefined;
    let result: string | undefined;
    if (typeof turn !== "string" && turn.tool_calls?.length) {
      for (const call of turn.tool_calls) {
        if (call.function.name === "finish") {
          finished = "completed";
          result = JSON.stringify(JSON.parse(call.function.arguments).value);
          break;
        }
        reply.push({ role: "tool", tool_call_id: call.id, content: `{"called":"${call.function.name}"}` });
      }
    } else {
      const r = text.trim().replaceAll("```tool_code", "").replaceAll("```", "").trim();
      if (r.startsWith("GET")) reply = [{ role: "user", content: `Here is the response from the GET request:\n{"url": ${JSON.stringify(r.slice(3).trim())}}` }];
      else if (r.startsWith("POST")) reply = [{ role: "user", content: "POST request accepted and executed successfully." }];
      else if (r.startsWith("FINISH(")) {
        finished = "completed";
        result = r.slice(7, -1);
      } else finished = "invalid_action";
    }
    this.messages.push(...reply);
    let reward = 0;
    if (finished) {
      this.info.status = finished;
      if (finished === "completed") {
        this.info.result = result;
        reward = result === JSON.stringify(this.task.sol) ? 1 : 0;
      }
      this.info.reward = reward as 0 | 1;
      return { observation: reply, reward, terminated: true, truncated: false, info: { ...this.info } };
    }
    if (this.info.rounds >= this.maxRounds) {
      this.info.status = "limit_reached";
      this.info.reward = 0;
      return { observation: reply, reward: 0, terminated: false, truncated: true, info: { ...this.info } };
    }
    return { observation: reply, reward: 0, terminated: false, truncated: false, info: { ...this.info } };
  }

  async abort(status: "context_limit" | "error"): Promise<EpisodeInfo> {
    if (this.info.status === "running") this.info = { ...this.info, status, reward: 0 };
    return { ...this.info };
  }

  close(): void {
    this.closed = true;
    this.onClose?.();
  }

  record() {
    return { task: this.task, protocol: this.protocol, messages: [...this.messages], actions: [], info: { ...this.info } };
  }
}

export function fixtureBackend(): ServerBackend & { closed: number; created: number } {
  const backend = {
    tasks: fixtureTasks,
    closed: 0,
    created: 0,
    createEnv(): EpisodeEnv {
      backend.created++;
      return new FixtureEnv(() => backend.closed++);
    },
  };
  return backend;
}
