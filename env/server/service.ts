// The server's operations on episodes, independent of HTTP: open, step, inspect, delete, score.
import { agentTurns, EnvInputError, EpisodeStateError, replayPolicy, runEpisode, type AgentTurn, type Message, type ResetResult, type StepResult } from "../core/index.ts";
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import type { ServerBackend } from "./backend.ts";
import { HttpError } from "./errors.ts";
import type { ServerMetrics } from "./metrics.ts";
import type { Episode, EpisodeRegistry } from "./registry.ts";
import type { CreateEpisodeRequest, ScoreRequest } from "./schemas.ts";

type IncomingMessage = Message;

export interface OpenedEpisode {
  episode: Episode;
  reset: ResetResult;
}

function settled(): void {}

export class EpisodeService {
  private readonly tasksById: Map<string, Task>;
  /** Set on shutdown: new episodes are refused with 503 `draining`. */
  draining = false;

  constructor(
    readonly backend: ServerBackend,
    readonly registry: EpisodeRegistry,
    readonly metrics: ServerMetrics,
  ) {
    this.tasksById = new Map(backend.tasks.map((t) => [t.id, t]));
  }

  resolveTask(body: { task_id?: string | undefined; task?: Task | undefined }): Task {
    if (body.task) return body.task;
    const task = this.tasksById.get(body.task_id!);
    if (!task) throw new HttpError(400, `task_id: unknown task "${body.task_id}" (GET /v1/tasks lists them)`, "task_id");
    return task;
  }

  /** `request.episode_id`: the client's chosen id (409 while held), else one this replica makes. */
  async open(task: Task, request: Pick<CreateEpisodeRequest, "protocol" | "max_rounds" | "writes" | "episode_id">): Promise<OpenedEpisode> {
    // While draining (shutdown), open episodes go on and new ones are refused, so a balancer moves on.
    if (this.draining) throw new HttpError(503, "this replica is shutting down: open the episode on another one", undefined, { "Retry-After": "1" }, "draining");
    const id = this.registry.newId(request.episode_id);
    this.registry.ensureRoom();
    const env = this.backend.createEnv();
    let reset: ResetResult;
    try {
      reset = await env.reset({ task, protocol: request.protocol, maxRounds: request.max_rounds, writes: request.writes });
    } catch (err) {
      await env.close();
      throw new HttpError(400, `task: the environment could not start it (${(err as Error).message})`, "task");
    }
    const now = Date.now();
    const episode: Episode = {
      id,
      env,
      task,
      protocol: request.protocol,
      createdAt: now,
      lastUsed: now,
      steps: 0,
      done: false,
      info: reset.info,
      tail: Promise.resolve(),
    };
    try {
      // Another request may have taken the chosen id while this one reset.
      this.registry.add(episode);
    } catch (err) {
      await env.close();
      throw err;
    }
    this.metrics.episodesStarted++;
    return { episode, reset };
  }

  /** The first observation of `task` in a fresh env that is closed right away (an episode nobody keeps). */
  async firstObservation(task: Task, request: Pick<CreateEpisodeRequest, "protocol" | "max_rounds" | "writes">): Promise<ResetResult> {
    const env = this.backend.createEnv();
    try {
      return await env.reset({ task, protocol: request.protocol, maxRounds: request.max_rounds, writes: request.writes });
    } catch (err) {
      throw new HttpError(400, `task: the environment could not start it (${(err as Error).message})`, "task");
    } finally {
      await env.close();
    }
  }

  /** Runs after any step already queued on this episode; 409 once it has finished. */
  step(episode: Episode, turn: AgentTurn): Promise<StepResult> {
    if (episode.done) throw this.finishedError(episode);
    episode.lastUsed = Date.now();
    const run = episode.tail.then(async () => {
      if (episode.done) throw this.finishedError(episode);
      const started = performance.now();
      let result: StepResult;
      try {
        result = await episode.env.step(turn);
      } catch (err) {
        // A malformed turn leaves the episode as it was; a state error means it already ended.
        if (err instanceof EnvInputError) throw new HttpError(400, `${episode.protocol === "text" ? "action" : "message"}: ${err.message}`, episode.protocol === "text" ? "action" : "message");
        if (err instanceof EpisodeStateError) {
          this.registry.markFinished(episode);
          throw new HttpError(409, `episode ${episode.id}: ${err.message}`, "episode_id");
        }
        episode.info = { ...episode.info, status: "error" };
        this.registry.markFinished(episode);
        this.metrics.episodeFinished("error", 0);
        throw new HttpError(500, `step failed: ${(err as Error).message}; the episode is closed`);
      }
      this.metrics.stepLatency.observe((performance.now() - started) / 1000);
      this.metrics.steps++;
      episode.steps++;
      episode.info = result.info;
      episode.lastUsed = Date.now();
      if (result.terminated || result.truncated) {
        this.registry.markFinished(episode);
        this.metrics.episodeFinished(result.info.status, result.reward);
      }
      return result;
    });
    // Settles with nothing: `run.catch(...)` would keep this step's reply (its observation text)
    // alive on the episode until the next step, long enough for the young-generation GC to copy it.
    episode.tail = run.then(settled, settled);
    return run;
  }

  /** The agent turn a step body carries, in the form the episode's protocol expects. */
  turnFor(protocol: Protocol, body: { action?: string | undefined; message?: IncomingMessage | undefined }): AgentTurn {
    if (body.message && body.message.role !== "assistant") {
      throw new HttpError(400, `message.role: must be "assistant" (got "${body.message.role}")`, "message.role");
    }
    // A text turn sent as a message keeps the reasoning it carries in a field.
    if (protocol === "text") return body.action ?? (body.message ? (body.message.reasoning_content == null && body.message.reasoning == null ? (body.message.content ?? "") : body.message) : "");
    return body.message ?? { role: "assistant", content: body.action ?? "" };
  }

  delete(id: string): boolean {
    return this.registry.delete(id);
  }

  /** Replays the transcript's assistant turns in a fresh episode (outside the registry) and grades it. */
  async score(body: ScoreRequest): Promise<{ result: StepResult; replayed: number; ignored: number; messages?: Message[] }> {
    const task = this.resolveTask(body);
    const turns = agentTurns(body.messages, body.protocol);
    if (turns.length === 0) throw new HttpError(400, "messages: no assistant turn to replay", "messages");
    const at = body.messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
    const replay = replayPolicy(turns);
    const env = this.backend.createEnv();
    try {
      const played = await runEpisode(env, replay, { task, protocol: body.protocol, maxRounds: body.max_rounds, writes: body.writes }).catch((err: unknown) => {
        // The policy plays its first turn once reset has succeeded.
        if (replay.played === 0) throw new HttpError(400, `task: the environment could not start it (${(err as Error).message})`, "task");
        if (err instanceof EnvInputError) throw new HttpError(400, `messages.${at[replay.played - 1]}: ${err.message}`, `messages.${at[replay.played - 1]}`);
        throw err;
      });
      this.metrics.steps += played.steps;
      this.metrics.scored++;
      return { result: played.last!, replayed: played.steps, ignored: turns.length - played.steps, ...(body.return_messages ? { messages: played.messages } : {}) };
    } finally {
      await env.close();
    }
  }

  private finishedError(episode: Episode): HttpError {
    return new HttpError(409, `episode ${episode.id} has finished (status ${episode.info.status}); open a new one`, "episode_id");
  }
}
