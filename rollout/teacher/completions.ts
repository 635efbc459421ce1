// The stand-in's answer to one chat completion request: recognise the task, find the episode, play
// its next turn, count tokens, and shape it as OpenAI's chat.completion object.
import type OpenAI from "openai";
import type { Message } from "../../env/core/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { combine, messageDigest, textDigest } from "./digest.ts";
import { EpisodeBook } from "./episodes.ts";
import { orphanState, playTurn } from "./player.ts";
import { TaskIndex } from "./recognise.ts";
import { thoughtFor, withReasoning, type TeacherReasoning } from "./reasoning.ts";
import { invalidRequest, parseChatRequest, toMessage, type ChatRequest } from "./request.ts";
import { TokenIds, wantsTokens } from "./tokens.ts";
import { TokenCounter } from "./usage.ts";

/** OpenAI's chat.completion, plus `ehrgym_stand_in`: what answered and what the turn did (clients ignore unknown fields). */
export type ChatCompletion = OpenAI.Chat.ChatCompletion & {
  prompt_token_ids?: number[];
  ehrgym_stand_in: { task_id: string; suite: string; type: string; sample: number | null; turn: string };
};

/** A validated request with its messages normalised and digested. */
export interface Body {
  request: ChatRequest;
  messages: Message[];
  digests: string[];
}

export const FINGERPRINT = "ehrgym-stand-in";

/** How a client marks a re-sent request: the openai client's `X-Stainless-Retry-Count` (> 0 on its own
 *  retries), or an `Idempotency-Key` header that stays the same across a caller's own retries. */
export interface Again {
  retry: boolean;
  key?: string;
}

/** A parsed request, with what several steps need computed once. */
export interface Conversation extends Body {
  protocol: Protocol;
  task: Task;
  /** Digest of the whole request (what a retry repeats). */
  key: string;
}

export class Completions {
  readonly index: TaskIndex;
  private readonly book: EpisodeBook<ChatCompletion>;
  private readonly tokens = new TokenCounter();
  private readonly ids: TokenIds;
  private served = 0;

  /** `maxRounds`: the round limit the expert plans for. */
  constructor(readonly options: { tasks: Iterable<Task>; seed: number; errorRate: number; maxRounds: number; reasoning?: TeacherReasoning | undefined }) {
    this.index = new TaskIndex(options.tasks);
    this.book = new EpisodeBook({ seed: options.seed, errorRate: options.errorRate });
    this.ids = new TokenIds(options.seed);
  }

  /** The request in a body (a 400 naming the problem when it is not JSON or not a chat request). */
  read(raw: Buffer): Body {
    let json: unknown;
    try {
      json = JSON.parse(raw.toString("utf8"));
    } catch (e) {
      throw invalidRequest(`the request body is not valid JSON: ${(e as Error).message}`);
    }
    const request = parseChatRequest(json);
    const messages = request.messages.map(toMessage);
    return { request, messages, digests: messages.map(messageDigest) };
  }

  /** Recognises the task (a 400 naming the problem when none matches). */
  conversation(body: Body): Conversation {
    const { request, messages, digests } = body;
    const task = this.index.recognise(messages);
    if (!task) {
      throw invalidRequest(
        `unrecognised conversation: its first user message contains the instruction of none of the ${this.index.size} tasks this ehrgym stand-in was started with (--tasks); it can only play those tasks`,
        "messages",
        "unrecognised_conversation",
      );
    }
    const protocol: Protocol = request.tools?.length ? "tools" : "text";
    const toolsKey = request.tools?.length ? textDigest(JSON.stringify(request.tools)) : "";
    // A request for token fields is another request: its remembered reply must carry them.
    const tokensKey = wantsTokens(request) ? JSON.stringify([request.return_token_ids ?? null, request.logprobs ?? null, request.return_tokens_as_token_ids ?? null]) : "";
    return { ...body, protocol, task, key: combine([request.model, protocol, toolsKey, tokensKey, ...digests]) };
  }

  /** The next turn; a request the client says it is re-sending gets the reply it had, and moves nothing. */
  complete(c: Conversation, again: Again = { retry: false }): ChatCompletion {
    const idempotent = again.key !== undefined ? `idempotency:${textDigest(`${c.key}:${again.key}`)}` : undefined;
    const remembered = (idempotent && this.book.reply(idempotent)) || (again.retry ? this.book.reply(c.key) : undefined);
    if (remembered) return remembered;
    const completion = this.next(c);
    if (idempotent) this.book.remember(idempotent, completion);
    return completion;
  }

  private next(c: Conversation): ChatCompletion {
    const lastAssistant = c.messages.map((m) => m.role).lastIndexOf("assistant");
    let sample: number | null = null;
    let state;
    if (lastAssistant < 0) ({ sample, state } = this.book.start(c.key, c.protocol));
    else {
      state = this.book.take(combine(c.digests.slice(0, lastAssistant + 1)));
      if (!state) {
        // Nothing waits under this prefix: a re-sent request gets its first answer again.
        const again = this.book.reply(c.key);
        if (again) return again;
        state = orphanState(combine(c.digests.slice(0, 1 + c.messages.findIndex((m) => m.role === "user"))), c.messages, c.protocol);
      }
    }
    const turn = playTurn(
      { task: c.task, protocol: c.protocol, messages: c.messages, tools: c.request.tools, maxRounds: this.options.maxRounds },
      state,
    );
    const replyDigest = messageDigest(turn.message);
    if (turn.next) this.book.park(combine([...c.digests, replyDigest]), turn.next);
    // The episode is keyed by the turn without its reasoning: what a client sends back, whether it drops the reasoning or not.
    const mode = this.options.reasoning;
    const shown = mode ? withReasoning(turn.message, thoughtFor(c.task, turn.message), mode) : turn.message;
    const completion = this.shape(c, shown, { sample, turn: turn.did });
    this.book.remember(c.key, completion);
    return completion;
  }

  /** An OpenAI-shaped completion carrying `message` (also used for the model-shaped faults). */
  shape(c: Conversation, message: Message, about: { sample: number | null; turn: string }, choices = true): ChatCompletion {
    const calls = message.tool_calls ?? [];
    const id = `chatcmpl-${textDigest(`${this.options.seed}:${c.key}:${this.served++}`).slice(0, 29)}`;
    const ids = wantsTokens(c.request) ? this.ids.fields(c.request, this.promptIds(c), message) : undefined;
    return {
      id,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: c.request.model,
      system_fingerprint: FINGERPRINT,
      choices: choices
        ? [
            {
              index: 0,
              message: { role: "assistant", content: message.content, refusal: null, ...(message.reasoning ? { reasoning: message.reasoning } : {}), ...(calls.length ? { tool_calls: calls } : {}) },
              // vLLM's logprobs object has `content` only (no `refusal`).
              logprobs: (ids?.logprobs ?? null) as OpenAI.Chat.ChatCompletion.Choice.Logprobs | null,
              finish_reason: calls.length ? "tool_calls" : "stop",
              ...(ids?.token_ids ? { token_ids: ids.token_ids } : {}),
            },
          ]
        : [],
      usage: ids?.usage ?? this.tokens.usage(c.messages, c.digests, message),
      ...(ids?.prompt_token_ids ? { prompt_token_ids: ids.prompt_token_ids } : {}),
      ehrgym_stand_in: { task_id: c.task.id, suite: c.task.suite, type: c.task.type, sample: about.sample, turn: about.turn },
    };
  }

  private promptIds(c: Conversation): number[] {
    const tools = c.request.tools;
    return this.ids.prompt(c.messages, c.digests, tools, tools?.length ? textDigest(JSON.stringify(tools)) : "");
  }

  /** Tokens of the request's messages (for the context-length fault's message). */
  promptTokens(c: Conversation): number {
    return this.tokens.usage(c.messages, c.digests, { role: "assistant", content: null }).prompt_tokens;
  }
}
