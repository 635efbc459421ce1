// The model policy: one chat.completions call per agent turn through the `openai` client, with
// client-side rate limits and our own retries (exponential backoff, full jitter, Retry-After), so a
// run can count them, stop on errors no retry fixes, and abort in-flight requests on Ctrl-C.
import OpenAI from "openai";
import {
  assistantTurn,
  historyMessage,
  isContextLimit,
  ModelError,
  RunAborted,
  type Message,
  type ModelCall,
  type Policy,
  type PolicyInfo,
  type PolicyInput,
  type PolicyStep,
  type Sampling,
  type Usage,
} from "../../env/core/index.ts";
import { backoffMs, sleep } from "./backoff.ts";
import { checkCompletion, describe, fatalReason, isRetryable, openAIErrorBody, retryAfterMs } from "./errors.ts";
import { RateLimiter } from "./rate-limit.ts";
import { withChildSignal } from "./signal.ts";
import { EpisodeTokens, parseReplyBody, TOKEN_REQUEST_FIELDS } from "./tokens.ts";

export interface ModelPolicyOptions {
  model: string;
  /** Endpoint root (`.../v1`); default: OPENAI_BASE_URL, else the client's own default. */
  baseURL?: string;
  /** The key itself (read from the environment by the caller; never written anywhere). */
  apiKey?: string;
  /** The variable the key came from, for error messages. */
  apiKeyEnv?: string;
  sampling?: Sampling;
  /** Passed through as top-level body fields (vLLM/SGLang options). */
  extraBody?: Record<string, unknown>;
  /** "tokens": ask for vLLM's token ids and logprobs and keep them in each turn's record. */
  capture?: "tokens";
  timeoutMs?: number;
  maxRetries?: number;
  rpm?: number;
  tpm?: number;
  /** Earlier turns' reasoning sent back as `reasoning_content` (keep) or left out (drop, the default: what
   *  Qwen3's and DeepSeek-R1's model cards ask; Qwen3's template then decides what it renders). */
  reasoningHistory?: "drop" | "keep";
  /** For tests: a ready client, and the jitter source. */
  client?: OpenAI;
  random?: () => number;
}

/** Counters the progress line shows; the runner reads them (`succeeded`: requests answered with a 2xx). */
const newStats = () => ({ requests: 0, succeeded: 0, retries: 0, failedRequests: 0, promptTokens: 0, completionTokens: 0 });
export type ModelStats = ReturnType<typeof newStats>;

export interface ModelPolicy extends Policy {
  readonly stats: ModelStats;
}

const hostOf = (url: string) => (URL.canParse(url) ? new URL(url).host : url);

/** A rough count before the endpoint tells us (for --tpm): ~4 characters a token. */
function estimateTokens(messages: readonly Message[], maxTokens: number | undefined): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content?.length ?? 0;
    for (const c of m.tool_calls ?? []) chars += c.function.arguments.length + c.function.name.length;
  }
  return Math.ceil(chars / 4) + (maxTokens ?? 256);
}

/** The `openai` client, reading error replies in the other shapes OpenAI-compatible servers send too. */
class EndpointClient extends OpenAI {
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers) {
    return super.makeStatusError(status, openAIErrorBody(error) as object, message, headers);
  }
}

export function createModelPolicy(o: ModelPolicyOptions): ModelPolicy {
  const client =
    o.client ??
    new EndpointClient({
      apiKey: o.apiKey ?? "none", // local endpoints often take no key; the client insists on one
      ...(o.baseURL ? { baseURL: o.baseURL } : {}),
      timeout: o.timeoutMs ?? 120_000,
      maxRetries: 0,
    });
  const baseURL = client.baseURL;
  const keyEnv = o.apiKeyEnv ?? "OPENAI_API_KEY";
  const maxRetries = o.maxRetries ?? 6;
  const limiter = o.rpm || o.tpm ? new RateLimiter({ ...(o.rpm ? { rpm: o.rpm } : {}), ...(o.tpm ? { tpm: o.tpm } : {}) }) : undefined;
  const sampling = o.sampling ?? {};
  const stats = newStats();
  const info: PolicyInfo = { kind: "openai", model: o.model, base_url_host: hostOf(baseURL), ...(Object.keys(sampling).length ? { sampling } : {}) };

  // A reply's body, read here rather than by the client so that --capture tokens can set the prompt's ids
  // aside (parseReplyBody); a body that is not JSON is kept as text, as the client keeps it.
  async function readBody(response: Response): Promise<{ data: unknown; promptText?: string }> {
    const mediaType = response.headers.get("content-type")?.split(";")[0]?.trim() ?? "";
    const text = await response.text();
    if (!mediaType.includes("application/json") && !mediaType.endsWith("+json")) return { data: text };
    return parseReplyBody(text, o.capture === "tokens");
  }
  // The loop hands the same messages array to every turn of an episode: it keys the episode's tokens.
  const episodes = new WeakMap<readonly Message[], EpisodeTokens>();

  async function call(input: PolicyInput): Promise<{ completion: OpenAI.Chat.ChatCompletion; promptText?: string; attempts: number; latencyMs: number; requestId?: string }> {
    const body = { ...o.extraBody, ...(o.capture === "tokens" ? TOKEN_REQUEST_FIELDS : {}), ...sampling, model: o.model, messages: input.messages.map((m) => historyMessage(m, o.reasoningHistory ?? "drop")), ...(input.tools?.length ? { tools: input.tools } : {}) } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const estimate = limiter ? estimateTokens(input.messages, sampling.max_tokens) : 0;
    // The same key on every attempt: an endpoint that honours it answers a retry as it answered the first.
    const turn = input.messages.filter((m) => m.role === "assistant").length;
    const headers = input.episodeKey ? { "Idempotency-Key": `${input.episodeKey}/${turn}` } : undefined;
    for (let attempt = 0; ; attempt++) {
      if (input.signal?.aborted) throw new RunAborted();
      await limiter?.acquire(estimate, input.signal).catch(() => {
        throw new RunAborted();
      });
      if (input.signal?.aborted) throw new RunAborted();
      const started = performance.now();
      stats.requests++;
      try {
        const { response, data, promptText } = await withChildSignal(input.signal, async (signal) => {
          const response = await client.chat.completions.create(body, { ...(headers ? { headers } : {}), ...(signal ? { signal } : {}) }).asResponse();
          return { response, ...(await readBody(response)) };
        });
        const request_id = response.headers.get("x-request-id");
        // A 200 that is not a chat completion (an HTML page, truncated JSON, no choices) is a transport fault.
        checkCompletion(data);
        const latencyMs = performance.now() - started;
        stats.succeeded++;
        limiter?.settle(estimate, data.usage?.total_tokens ?? estimate);
        return { completion: data, ...(promptText !== undefined ? { promptText } : {}), attempts: attempt + 1, latencyMs, ...(request_id ? { requestId: request_id } : {}) };
      } catch (err) {
        stats.failedRequests++;
        limiter?.settle(estimate, 0);
        if (input.signal?.aborted || err instanceof OpenAI.APIUserAbortError) throw new RunAborted();
        if (isContextLimit(err)) throw new ModelError("context_limit", describe(err));
        const fatal = fatalReason(err, baseURL, keyEnv, o.model);
        if (fatal) throw new ModelError("model_error", describe(err), fatal);
        if (!isRetryable(err) || attempt >= maxRetries)
          throw new ModelError("model_error", `${describe(err)}${attempt > 0 ? ` (after ${attempt + 1} attempts)` : ""}`);
        stats.retries++;
        await sleep(backoffMs(attempt, retryAfterMs(err), o.random ? { random: o.random } : {}), input.signal).catch(() => {
          throw new RunAborted();
        });
      }
    }
  }

  const tokensOf = (messages: readonly Message[]) => {
    let episode = episodes.get(messages);
    if (!episode) episodes.set(messages, (episode = new EpisodeTokens()));
    return episode;
  };

  return {
    name: o.model,
    info,
    stats,
    async act(input): Promise<PolicyStep> {
      const { completion, promptText, attempts, latencyMs, requestId } = await call(input);
      const choice = completion.choices[0]!;
      const usage: Usage | undefined = completion.usage
        ? { prompt_tokens: completion.usage.prompt_tokens ?? 0, completion_tokens: completion.usage.completion_tokens ?? 0, total_tokens: completion.usage.total_tokens ?? 0 }
        : undefined;
      if (usage) {
        stats.promptTokens += usage.prompt_tokens;
        stats.completionTokens += usage.completion_tokens;
      }
      const { turn, note } = assistantTurn(choice.message, input.protocol);
      const record: ModelCall = {
        latency_ms: Math.round(latencyMs * 100) / 100,
        finish_reason: choice.finish_reason ?? null,
        ...(usage ? { usage } : {}),
        ...(requestId ? { request_id: requestId } : {}),
        attempts,
        ...(o.capture === "tokens" ? { tokens: tokensOf(input.messages).read(completion, promptText) } : {}),
      };
      return { turn, call: record, ...(note ? { note } : {}) };
    },
  };
}
