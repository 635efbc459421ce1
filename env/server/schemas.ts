// Request and response bodies of the reward server. These zod schemas are the single source of
// truth: handlers parse with them and GET /v1/schema publishes them as JSON Schema.
import { z } from "zod";
import { Message, WritesMode } from "../core/index.ts";
import { EpisodeStatus, Protocol } from "../protocol/index.ts";
import { Task } from "../tasks/index.ts";

export const MAX_ROUNDS_LIMIT = 1000;

/** Routing headers: the client names the episode on every request; every reply names the replica. */
export const EPISODE_HEADER = "x-episode-id";
export const REPLICA_HEADER = "X-Ehrgym-Replica";

/** An episode id a client chooses (so a load balancer can hash it before the episode exists). */
export const EpisodeId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "1-128 characters: letters, digits, '.', '_', ':', '-' (first a letter or digit)");

/** An assistant message as trainers send it: `content` may be omitted when there are tool calls. */
export const IncomingMessage = Message.extend({ content: z.string().nullable().default(null) });

const episodeFields = {
  task_id: z.string().min(1).optional(),
  task: Task.optional(),
  protocol: Protocol.default("text"),
  max_rounds: z.number().int().min(1).max(MAX_ROUNDS_LIMIT).default(8),
  writes: WritesMode.optional(),
};
/** Only where an episode is kept: POST /v1/episodes and OpenEnv's reset (score episodes are never kept). */
const chosenId = { episode_id: EpisodeId.optional() };

const oneTask = (b: { task_id?: string | undefined; task?: unknown }) => (b.task_id === undefined) !== (b.task === undefined);
const oneTaskError = { message: "exactly one of task_id or task is required", path: ["task_id"] };

export const CreateEpisodeRequest = z.strictObject({ ...episodeFields, ...chosenId }).refine(oneTask, oneTaskError);
export type CreateEpisodeRequest = z.infer<typeof CreateEpisodeRequest>;

export const StepRequest = z
  .strictObject({
    /** Text protocol: the assistant turn text. */
    action: z.string().optional(),
    /** Tool protocol: the assistant message with tool_calls (text protocol: its content is the turn). */
    message: IncomingMessage.optional(),
  })
  .refine((b) => (b.action === undefined) !== (b.message === undefined), {
    message: "exactly one of action or message is required",
    path: ["action"],
  });
export type StepRequest = z.infer<typeof StepRequest>;

export const ScoreRequest = z
  .strictObject({
    ...episodeFields,
    /** The transcript; its assistant messages are replayed in order in a fresh episode. */
    messages: z.array(IncomingMessage).min(1),
    /** Return the replayed transcript (prompt, turns and environment replies). */
    return_messages: z.boolean().default(false),
  })
  .refine(oneTask, oneTaskError);
export type ScoreRequest = z.infer<typeof ScoreRequest>;

export const TasksQuery = z.strictObject({
  suite: z.string().optional(),
  type: z.string().optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).optional(),
});

// Responses (published in /v1/schema; handlers build them from core's types).
const Check = z.object({ name: z.string(), ok: z.boolean(), detail: z.string() });
export const EpisodeInfoSchema = z.looseObject({
  taskId: z.string(),
  status: EpisodeStatus,
  rounds: z.number().int(),
  invalidActions: z.number().int(),
  reward: z.union([z.literal(0), z.literal(1)]).optional(),
  checks: z.array(Check).optional(),
  partialCredit: z.number().optional(),
  /** workflows: each requested rule's checkpoint verdict. */
  checkpoints: z.array(z.object({ rule: z.string(), source: z.string(), ok: z.boolean() })).optional(),
  result: z.string().optional(),
});

export const CreateEpisodeResponse = z.object({
  episode_id: z.string(),
  observation: z.array(Message),
  tools: z.array(z.unknown()).optional(),
  info: EpisodeInfoSchema,
});

export const StepResponse = z.object({
  observation: z.array(Message),
  reward: z.number(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  info: EpisodeInfoSchema,
});

export const EpisodeStateResponse = z.object({
  episode_id: z.string(),
  task_id: z.string(),
  protocol: Protocol,
  steps: z.number().int(),
  done: z.boolean(),
  created_at: z.string(),
  idle_ms: z.number(),
  info: EpisodeInfoSchema,
  messages: z.array(Message).optional(),
});

export const ScoreResponse = z.object({
  reward: z.number(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  info: EpisodeInfoSchema,
  replayed_turns: z.number().int(),
  ignored_turns: z.number().int(),
  messages: z.array(Message).optional(),
});

export const ErrorResponse = z.object({
  error: z.string(),
  field: z.string().optional(),
  /** Machine-readable kind, where a client acts on it: "unknown_episode" (404), "episode_exists" (409). */
  code: z.string().optional(),
});

export const apiSchemas = {
  CreateEpisodeRequest,
  CreateEpisodeResponse,
  StepRequest,
  StepResponse,
  EpisodeStateResponse,
  ScoreRequest,
  ScoreResponse,
  ErrorResponse,
} as const;

/** JSON Schema of every request/response body (input shapes: defaults are optional). */
export function apiJsonSchema(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(apiSchemas)) {
    out[name] = z.toJSONSchema(schema, { io: name.endsWith("Request") ? "input" : "output", unrepresentable: "any" });
  }
  return out;
}
