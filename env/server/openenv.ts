// OpenEnv's contract (openenv-core's HTTP server and `openenv validate`): POST /reset, POST /step,
// GET /state, GET /health, /metadata, /schema, /openapi.json, POST /mcp (JSON-RPC), and the /ws
// session in ./socket.ts (one episode per connection). Replies are {observation, reward, done}.
//
// openenv-core's HTTP /reset, /step and /state have no session: each request gets a fresh env,
// closed when it answers. Here too, over HTTP nothing is shared between clients and no request
// reaches an episode it does not name:
// - POST /reset without an episode id answers the first observation of a fresh episode that is not
//   kept (its episode_id is null); with one (`episode_id` or X-Episode-Id) it opens that episode and
//   keeps it, as POST /v1/episodes does.
// - POST /step needs the episode id (400 without one: a fresh env has no task to step).
// - GET /state without an id is a fresh env's state (no episode); with one, that episode's.
import { z } from "zod";
import { randomInt } from "node:crypto";
import { Message, WritesMode, type ResetResult } from "../core/index.ts";
import { Protocol } from "../protocol/index.ts";
import { Task } from "../tasks/index.ts";
import { HttpError } from "./errors.ts";
import { parseBody, type Route } from "./http.ts";
import type { Episode } from "./registry.ts";
import { chosenIdOf, episodeIdOf } from "./routes.ts";
import { EpisodeId, IncomingMessage, MAX_ROUNDS_LIMIT } from "./schemas.ts";
import type { EpisodeService } from "./service.ts";

export const OpenEnvResetRequest = z.object({
  task_id: z.string().min(1).optional(),
  task: Task.optional(),
  protocol: Protocol.default("text"),
  max_rounds: z.number().int().min(1).max(MAX_ROUNDS_LIMIT).default(8),
  writes: WritesMode.optional(),
  /** Picks task number `seed % tasks` when no task is named (without it: /ws the session's next task, HTTP a random one). */
  seed: z.number().int().min(0).optional(),
  /** OpenEnv's custom episode id. HTTP: keep the episode under this id (else it is not kept); /ws: name the session's episode. */
  episode_id: EpisodeId.optional(),
});
export type OpenEnvResetRequest = z.infer<typeof OpenEnvResetRequest>;

/** The action: the assistant's turn (text protocol: its content; tool protocol: its tool_calls). */
export const OpenEnvAction = IncomingMessage.omit({ role: true, tool_call_id: true, name: true }).extend({
  role: z.literal("assistant").default("assistant"),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const OpenEnvStepRequest = z.object({
  action: OpenEnvAction,
  /** The episode to step (HTTP; or X-Episode-Id): the one a /reset with episode_id opened. */
  episode_id: z.string().optional(),
  timeout_s: z.number().positive().optional(),
  request_id: z.string().max(255).optional(),
});

export const OpenEnvObservation = z.object({
  /** null: the first observation of an HTTP /reset without an episode id (nothing kept). */
  episode_id: z.string().nullable(),
  task_id: z.string(),
  /** The new chat messages (at reset: the prompt). */
  messages: z.array(Message),
  /** Tool protocol: the tools (at reset). */
  tools: z.array(z.unknown()).optional(),
  info: z.record(z.string(), z.unknown()),
});

export const OpenEnvState = z.object({
  episode_id: z.string().nullable(),
  step_count: z.number().int(),
  task_id: z.string().nullable(),
  protocol: Protocol.nullable(),
  done: z.boolean(),
  info: z.record(z.string(), z.unknown()),
});

export interface OpenEnvReply {
  observation: { episode_id: string | null; task_id: string; messages: Message[]; tools?: unknown[] | undefined; info: unknown };
  reward: number | null;
  done: boolean;
}

type OpenEnvStateReply = Omit<z.infer<typeof OpenEnvState>, "info"> & { info: unknown };

/** The first observation of a reset; `episodeId` null when the episode is not kept. */
function resetReply(episodeId: string | null, task: Task, reset: ResetResult): OpenEnvReply {
  return { observation: { episode_id: episodeId, task_id: task.id, messages: reset.observation, tools: reset.tools, info: reset.info }, reward: null, done: false };
}

async function stepEpisode(service: EpisodeService, episode: Episode, data: unknown): Promise<OpenEnvReply> {
  const action = parseBody(OpenEnvAction, data);
  const { metadata: _metadata, ...message } = action;
  const result = await service.step(episode, service.turnFor(episode.protocol, { message }));
  return {
    observation: { episode_id: episode.id, task_id: episode.task.id, messages: result.observation, info: result.info },
    reward: result.reward,
    done: result.terminated || result.truncated,
  };
}

const NO_EPISODE: OpenEnvStateReply = { episode_id: null, step_count: 0, task_id: null, protocol: null, done: false, info: {} };

function stateOf(episode: Episode): OpenEnvStateReply {
  return { episode_id: episode.id, step_count: episode.steps, task_id: episode.task.id, protocol: episode.protocol, done: episode.done, info: episode.info };
}

/** The task a reset names, or number `seed % tasks`; without either, `fallback`'s. */
function resetTask(service: EpisodeService, body: OpenEnvResetRequest, fallback: () => number): Task {
  if (body.task || body.task_id) return service.resolveTask(body);
  const { tasks } = service.backend;
  if (tasks.length === 0) throw new HttpError(400, "task_id: the server has no tasks; pass task", "task_id");
  return tasks[(body.seed ?? fallback()) % tasks.length]!;
}

/**
 * A /ws connection's session: the episode its last reset opened, which step and state act on. It
 * owns that episode: a reset replaces it, close (and the connection's end) deletes it.
 */
export class OpenEnvSession {
  private current: string | undefined;
  private nextTask = 0;

  constructor(private readonly service: EpisodeService) {}

  async reset(data: unknown): Promise<OpenEnvReply> {
    const body = parseBody(OpenEnvResetRequest, data ?? {});
    const task = resetTask(this.service, body, () => this.nextTask++);
    this.close();
    const { episode, reset } = await this.service.open(task, body);
    this.current = episode.id;
    return resetReply(episode.id, task, reset);
  }

  step(data: unknown): Promise<OpenEnvReply> {
    if (this.current === undefined) throw new HttpError(404, "episode_id: no episode; send reset first", "episode_id");
    return stepEpisode(this.service, this.service.registry.get(this.current), data);
  }

  state(): OpenEnvStateReply {
    return this.current === undefined ? NO_EPISODE : stateOf(this.service.registry.get(this.current));
  }

  /** Deletes the session's episode. */
  close(): void {
    if (this.current !== undefined) this.service.delete(this.current);
    this.current = undefined;
  }
}

const schemaOf = (s: z.ZodType, io: "input" | "output") => z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;

export const OPENENV_METADATA = {
  name: "ehrgym",
  description:
    "MedAgentBench-style EHR agent tasks over a FHIR R4 server: each episode is one clinical task; actions are the assistant's turns (text: GET/POST/FINISH lines; tools: tool_calls), rewards are the exact graders' verdicts.",
  version: "0.1.0",
} as const;

/** OpenEnv's HTTP routes (no session: see the top of this file); `all` lists every route for /openapi.json. */
export function openEnvRoutes(service: EpisodeService, all: () => Route[]): Route[] {
  let openapi: Record<string, unknown> | undefined;
  return [
    {
      method: "POST",
      pattern: ["reset"],
      name: "POST /reset",
      handle: async (req) => {
        const body = parseBody(OpenEnvResetRequest, req.body);
        const id = chosenIdOf(req, body.episode_id);
        const task = resetTask(service, body, () => randomInt(service.backend.tasks.length));
        if (id !== undefined) {
          const { episode, reset } = await service.open(task, { ...body, episode_id: id });
          return { value: resetReply(episode.id, task, reset) };
        }
        return { value: resetReply(null, task, await service.firstObservation(task, body)) };
      },
    },
    {
      method: "POST",
      pattern: ["step"],
      name: "POST /step",
      handle: async (req) => {
        const body = parseBody(OpenEnvStepRequest, req.body);
        const id = episodeIdOf(req, body.episode_id);
        if (id === undefined) {
          throw new HttpError(400, "episode_id: required (OpenEnv's HTTP /step has no session: name the episode a /reset with episode_id opened, or use /ws)", "episode_id");
        }
        return { value: await stepEpisode(service, service.registry.get(id), body.action) };
      },
    },
    {
      method: "GET",
      pattern: ["state"],
      name: "GET /state",
      handle: (req) => {
        const id = episodeIdOf(req, req.query.get("episode_id"));
        return { value: id === undefined ? NO_EPISODE : stateOf(service.registry.get(id)) };
      },
    },
    { method: "GET", pattern: ["health"], name: "GET /health", public: true, handle: () => ({ value: { status: "healthy" } }) },
    { method: "GET", pattern: ["metadata"], name: "GET /metadata", public: true, handle: () => ({ value: OPENENV_METADATA }) },
    {
      method: "GET",
      pattern: ["schema"],
      name: "GET /schema",
      public: true,
      handle: () => ({ value: { action: schemaOf(OpenEnvAction, "input"), observation: schemaOf(OpenEnvObservation, "output"), state: schemaOf(OpenEnvState, "output") } }),
    },
    {
      method: "GET",
      pattern: ["openapi.json"],
      name: "GET /openapi.json",
      public: true,
      handle: () => ({ value: (openapi ??= openApi(all())) }),
    },
    {
      method: "POST",
      pattern: ["mcp"],
      name: "POST /mcp",
      public: true,
      // No MCP tools are served here (the tool protocol's tools come with each episode): every
      // JSON-RPC request gets JSON-RPC's own "method not found" or "invalid request".
      handle: (req) => {
        const b = req.body as { jsonrpc?: unknown; id?: unknown; method?: unknown } | null;
        const id = b && (typeof b.id === "string" || typeof b.id === "number") ? b.id : null;
        const error =
          b && b.jsonrpc === "2.0" && typeof b.method === "string"
            ? { code: -32601, message: `method not found: ${b.method} (ehrgym serves no MCP tools; the tool protocol's tools come with each episode)` }
            : { code: -32600, message: "invalid request: expected a JSON-RPC 2.0 request" };
        return { value: { jsonrpc: "2.0", id, error } };
      },
    },
  ];
}

function openApi(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = "/" + r.pattern.map((p) => (p.startsWith(":") ? `{${p.slice(1)}}` : p)).join("/");
    (paths[path] ??= {})[r.method.toLowerCase()] = { summary: r.name, ...(r.public ? { security: [] } : {}) };
  }
  return { openapi: "3.1.0", info: { title: "ehrgym reward server", version: OPENENV_METADATA.version }, paths };
}
