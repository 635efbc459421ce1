// The body of POST /v1/chat/completions (the part the stand-in reads), validated with zod and
// normalised to the environment's Message shape.
import { z } from "zod";
import type { Message } from "../../env/core/index.ts";
import { splitReasoning } from "../../env/protocol/index.ts";

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const ToolCallIn = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const MessageIn = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  tool_calls: z.array(ToolCallIn).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  // An earlier turn's reasoning sent back (vLLM's field names).
  reasoning_content: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
});

const ToolIn = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1) }),
});

export const ChatRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(MessageIn).min(1),
  tools: z.array(ToolIn).optional(),
  stream: z.boolean().nullable().optional(),
  n: z.number().int().min(1).nullable().optional(),
  // vLLM's token fields (rollout/teacher/tokens.ts answers them).
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).nullable().optional(),
  return_token_ids: z.boolean().nullable().optional(),
  return_tokens_as_token_ids: z.boolean().nullable().optional(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

/** A request the stand-in cannot serve, answered with OpenAI's error shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const invalidRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError(400, message, "invalid_request_error", code, param);

export function parseChatRequest(raw: unknown): ChatRequest {
  const parsed = ChatRequest.safeParse(raw);
  if (parsed.success) {
    if (parsed.data.top_logprobs && !parsed.data.logprobs) throw invalidRequest("when using `top_logprobs`, `logprobs` must be set to true", "top_logprobs");
    return parsed.data;
  }
  const issue = parsed.error.issues[0]!;
  const param = issue.path.map(String).join(".") || null;
  throw invalidRequest(`invalid request body: ${param ?? "(body)"}: ${issue.message}`, param);
}

const text = (content: string | { type: string; text?: string | undefined }[] | null | undefined): string | null =>
  content === null || content === undefined ? null : typeof content === "string" ? content : content.map((p) => p.text ?? "").join("");

export type MessageIn = z.infer<typeof MessageIn>;

/** The message in the environment's shape: an assistant turn's content without a leading think block (as
 *  ehrgym's environment reads it: what the stand-in keys conversations on), its reasoning apart, from the
 *  field it was sent back in or that think block. */
export function toMessage(m: MessageIn): Message {
  const content = text(m.content);
  const split = m.role === "assistant" ? splitReasoning(content, undefined) : undefined;
  const out: Message = { role: m.role === "developer" ? "system" : m.role, content: split ? split.content : content };
  const reasoning = split && (m.reasoning_content || m.reasoning || split.reasoning);
  if (reasoning) out.reasoning_content = reasoning;
  if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } }));
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  return out;
}
