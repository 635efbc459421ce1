// OpenEnv's contract (openenv-core's HTTP server and `openenv validate`): POST /reset, POST /step,
// GET /state (one server-wide session: the episode the last /reset opened, or the one named by
// `episode_id` or X-Episode-Id),
// GET /health, /metadata, /schema, /openapi.json, POST /mcp (JSON-RPC), and the /ws session in
// ./socket.ts (one episode per connection). Replies are {observation, reward, done}.
import { z } from "zod";
import { Message, WritesMode } from "../core/index.ts";
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
  /** Picks task number `seed % tasks` when no task is named. */
  seed: z.number().int().min(0).optional(),
  /** OpenEnv's custom episode id (else the server names the episode). */
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
  /** The episode to step (HTTP only); defaults to the one the last /reset opened. */
  episode_id: z.string().optional(),
  timeout_s: z.number().positive().optional(),
  request_id: z.string().max(255).optional(),
});

export const OpenEnvObservation = z.object({
  episode_id: z.string(),
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
  observation: { episode_id: string; task_id: string; messages: Message[]; tools?: unknown[] | undefined; info: unknown };
  reward: number | null;
  done: boolean;
}

type OpenEnvStateReply = Omit<z.infer<typeof OpenEnvState>, "info"> & { info: unknown };

/**
 * An OpenEnv session: the episode its last reset opened, the one step and state act on by default.
 * `owns`: a /ws connection's session owns its episode (a reset replaces it, close deletes it); the
 * HTTP session is shared by every client, so its resets leave earlier episodes to their owners
 * (who name them by episode_id or X-Episode-Id) and to the idle TTL.
 */
export class OpenEnvSession {
  private current: string | undefined;
  private nextTask = 0;

  constructor(
    private readonly service: EpisodeService,
    private readonly owns: boolean,
  ) {}

  /** `chosen`: the episode id to use given the body's (HTTP: its X-Episode-Id header too). */
  async reset(data: unknown, chosen: (given: string | undefined) => string | undefined = (given) => given): Promise<OpenEnvReply> {
    const body = parseBody(OpenEnvResetRequest, data ?? {});
    const { tasks } = this.service.backend;
    let task;
    if (body.task || body.task_id) task = this.service.resolveTask(body);
    else {
      if (tasks.length === 0) throw new HttpError(400, "task_id: the server has no tasks; pass task", "task_id");
      task = tasks[(body.seed ?? this.nextTask++) % tasks.length]!;
    }
    if (this.owns) this.close();
    const { episode, reset } = await this.service.open(task, { ...body, episode_id: chosen(body.episode_id) });
    this.current = episode.id;
    return { observation: { episode_id: episode.id, task_id: task.id, messages: reset.observation, tools: reset.tools, info: reset.info }, reward: null, done: false };
  }

  async step(data: unknown, episodeId?: string): Promise<OpenEnvReply> {
    const action = parseBody(OpenEnvAction, data);
    const episode = this.episode(episodeId);
    const { metadata: _metadata, ...message } = action;
    const result = await this.service.step(episode, this.service.turnFor(episode.protocol, { message }));
    return {
      observation: { episode_id: episode.id, task_id: episode.task.id, messages: result.observation, info: result.info },
      reward: result.reward,
      done: result.terminated || result.truncated,
    };
  }

  state(episodeId?: string): OpenEnvStateReply {
    const id = episodeId ?? this.current;
    if (id === undefined) return { episode_id: null, step_count: 0, task_id: null, protocol: null, done: false, info: {} };
    const e = this.service.registry.get(id);
    return { episode_id: e.id, step_count: e.steps, task_id: e.task.id, protocol: e.protocol, done: e.done, info: e.info };
  }

  /** Deletes the session's episode on the server (a /ws session's, when it ends). */
  close(): void {
    if (this.current !== undefined && this.owns) this.service.delete(this.current);
    this.current = undefined;
  }

  private episode(id: string | undefined): Episode {
    const chosen = id ?? this.current;
    if (!chosen) throw new HttpError(404, "episode_id: no episode; call reset first", "episode_id");
    return this.service.registry.get(chosen);
  }
}

const schemaOf = (s: z.ZodType, io: "input" | "output") => z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;

export const OPENENV_METADATA = {
  name: "ehrgym",
  description:
    "MedAgentBench-style EHR agent tasks over a FHIR R4 server: each episode is one clinical task; actions are the assistant's turns (text: GET/POST/FINISH lines; tools: tool_calls), rewards are the exact graders' verdicts.",
  version: "0.1.0",
} as const;

/** The OpenEnv routes over one server-wide session; `all` lists every route for /openapi.json. */
export function openEnvRoutes(service: EpisodeService, all: () => Route[]): Route[] {
  const session = new OpenEnvSession(service, false);
  let openapi: Record<string, unknown> | undefined;
  return [
    {
      method: "POST",
      pattern: ["reset"],
      name: "POST /reset",
      handle: async (req) => ({ value: await session.reset(req.body, (given) => chosenIdOf(req, given)) }),
    },
    {
      method: "POST",
      pattern: ["step"],
      name: "POST /step",
      handle: async (req) => {
        const body = parseBody(OpenEnvStepRequest, req.body);
        return { value: await session.step(body.action, episodeIdOf(req, body.episode_id)) };
      },
    },
    {
      method: "GET",
      pattern: ["state"],
      name: "GET /state",
      handle: (req) => ({ value: session.state(episodeIdOf(req, req.query.get("episode_id"))) }),
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
