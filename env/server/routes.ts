// The API: /v1 episodes, score, tasks, schema, health, metrics (OpenEnv's routes: ./openenv.ts).
import type { AgentTurn, StepResult } from "../core/index.ts";
import { HttpError } from "./errors.ts";
import { parseBody, type Reply, type Request, type Route } from "./http.ts";
import type { Episode } from "./registry.ts";
import {
  apiJsonSchema,
  CreateEpisodeRequest,
  EPISODE_HEADER,
  EpisodeId,
  ScoreRequest,
  StepRequest,
  TasksQuery,
} from "./schemas.ts";
import type { EpisodeService } from "./service.ts";

function stepReply(result: StepResult): Reply {
  return {
    value: {
      observation: result.observation,
      reward: result.reward,
      terminated: result.terminated,
      truncated: result.truncated,
      info: result.info,
    },
  };
}

function stateOf(episode: Episode, withMessages: boolean) {
  return {
    episode_id: episode.id,
    task_id: episode.task.id,
    protocol: episode.protocol,
    steps: episode.steps,
    done: episode.done,
    created_at: new Date(episode.createdAt).toISOString(),
    idle_ms: Date.now() - episode.lastUsed,
    info: episode.info,
    messages: withMessages ? episode.env.record().messages : undefined,
  };
}

const truthy = (v: string | null) => v !== null && v !== "0" && v !== "false";

/**
 * The episode a request is about: the id in its path or body, else its X-Episode-Id header (the
 * load balancer's routing key). Both given and different is a 400: the request was routed by one
 * and would act on the other.
 */
export function episodeIdOf(req: Request, given: string | null | undefined): string | undefined {
  const raw = req.headers[EPISODE_HEADER];
  const header = Array.isArray(raw) ? raw[0] : raw;
  if (header === undefined || header === "") return given ?? undefined;
  if (given != null && given !== header) {
    throw new HttpError(400, `X-Episode-Id: ${JSON.stringify(header)} differs from the episode_id of the request (${JSON.stringify(given)})`, "X-Episode-Id");
  }
  return header;
}

/** A client-chosen id from the body or the header, checked like the body field. */
export function chosenIdOf(req: Request, given: string | undefined): string | undefined {
  const id = episodeIdOf(req, given);
  if (id === undefined || id === given) return id;
  const ok = EpisodeId.safeParse(id);
  if (!ok.success) throw new HttpError(400, `X-Episode-Id: ${ok.error.issues[0]!.message} (got ${JSON.stringify(id.slice(0, 80))})`, "X-Episode-Id");
  return id;
}

export function buildRoutes(service: EpisodeService, meta: { replicaId: string; startedAt: number; draining: () => boolean; inFlight: () => number }): Route[] {
  const { registry, metrics, backend } = service;
  let schemaCache: Record<string, unknown> | undefined;

  return [
    {
      method: "GET",
      pattern: ["healthz"],
      name: "GET /healthz",
      public: true,
      handle: () => ({
        // 503 while draining: readiness fails, the pod leaves the Service, open episodes finish.
        status: meta.draining() ? 503 : 200,
        value: {
          ok: !meta.draining(),
          draining: meta.draining(),
          replica_id: meta.replicaId,
          episodes_open: registry.open,
          episodes_retained: registry.retained,
          // Other than this one: what a drain would wait for.
          requests_in_flight: meta.inFlight() - 1,
          tasks: backend.tasks.length,
          uptime_s: Math.round((Date.now() - meta.startedAt) / 1000),
        },
      }),
    },
    {
      method: "GET",
      pattern: ["metrics"],
      name: "GET /metrics",
      handle: () => ({ text: metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8" }),
    },
    {
      method: "GET",
      pattern: ["v1", "schema"],
      name: "GET /v1/schema",
      handle: () => ({ value: (schemaCache ??= apiJsonSchema()) }),
    },
    {
      method: "GET",
      pattern: ["v1", "tasks"],
      name: "GET /v1/tasks",
      handle: (req) => {
        const q = parseBody(TasksQuery, Object.fromEntries(req.query));
        const matching = backend.tasks.filter((t) => (!q.suite || t.suite === q.suite) && (!q.type || t.type === q.type));
        const page = matching.slice(q.offset, q.limit === undefined ? undefined : q.offset + q.limit);
        return { value: { total: matching.length, offset: q.offset, tasks: page } };
      },
    },
    {
      method: "POST",
      pattern: ["v1", "episodes"],
      name: "POST /v1/episodes",
      handle: async (req) => {
        const body = parseBody(CreateEpisodeRequest, req.body);
        const { episode, reset } = await service.open(service.resolveTask(body), { ...body, episode_id: chosenIdOf(req, body.episode_id) });
        return {
          status: 201,
          value: { episode_id: episode.id, observation: reset.observation, tools: reset.tools, info: reset.info },
        };
      },
    },
    {
      method: "GET",
      pattern: ["v1", "episodes", ":id"],
      name: "GET /v1/episodes/:id",
      handle: (req, p) => ({ value: stateOf(registry.get(episodeIdOf(req, p.id)!), truthy(req.query.get("messages"))) }),
    },
    {
      method: "DELETE",
      pattern: ["v1", "episodes", ":id"],
      name: "DELETE /v1/episodes/:id",
      handle: (req, p) => {
        const episode = registry.get(episodeIdOf(req, p.id)!);
        service.delete(episode.id);
        return { value: { episode_id: episode.id, deleted: true } };
      },
    },
    {
      method: "POST",
      pattern: ["v1", "episodes", ":id", "step"],
      name: "POST /v1/episodes/:id/step",
      handle: async (req, p) => {
        const episode = registry.get(episodeIdOf(req, p.id)!);
        const body = parseBody(StepRequest, req.body);
        return stepReply(await service.step(episode, service.turnFor(episode.protocol, body)));
      },
    },
    {
      method: "POST",
      pattern: ["v1", "score"],
      name: "POST /v1/score",
      handle: async (req) => {
        const body = parseBody(ScoreRequest, req.body);
        const { result, replayed, ignored, messages } = await service.score(body);
        return {
          value: {
            reward: result.reward,
            terminated: result.terminated,
            truncated: result.truncated,
            info: result.info,
            replayed_turns: replayed,
            ignored_turns: ignored,
            messages,
          },
        };
      },
    },
  ];
}
