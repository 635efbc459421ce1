// MedAgentEnv: one gym-style episode at a time over a shared backend (reset/step/close/record).
import { z } from "zod";
import { FhirService, type FhirHandler, type FhirResponse, type FhirStore } from "../fhir/index.ts";
import { grade, type GradeInput, type GradeResult, type Grader } from "../graders/index.ts";
import {
  DEFAULT_TOOL_NAMES,
  getErrorReply,
  getReply,
  httpErrorMessage,
  loadFunctions,
  loadPromptTemplate,
  loadSystemPrompt,
  openAITools,
  parseTextTurn,
  planToolCall,
  POST_ACCEPTED,
  POST_INVALID,
  Protocol,
  TextPrompt,
  UrlRouter,
  type Action,
  type EpisodeStatus,
} from "../protocol/index.ts";
import { type Py, toJs } from "../python/index.ts";
import type { Task } from "../tasks/index.ts";
import { DEFAULT_API_BASE, EmbeddedBackend, type Backend, type EpisodeConnection } from "./backend.ts";
import { EnvInputError, EpisodeStateError } from "./errors.ts";
import { defaultRubric, type Rubric } from "./rubric.ts";
import {
  Message,
  WritesMode,
  type AgentTurn,
  type EpisodeInfo,
  type EpisodeRecord,
  type ResetOptions,
  type ResetResult,
  type StepResult,
} from "./types.ts";

export const DEFAULT_MAX_ROUNDS = 8;

export interface EnvOptions {
  /** Where FHIR requests go. Shorthand: give `store` (and optionally `service`, `apiBase`) for an EmbeddedBackend. */
  backend?: Backend;
  store?: FhirStore;
  /** Default: a FhirService over `store` rendering links with `apiBase`. */
  service?: FhirHandler;
  /** Default http://localhost:8080/fhir/ (only with `store`). */
  apiBase?: string;
  /** Tasks that `reset({taskId})` can name. */
  tasks?: Iterable<Task> | ((id: string) => Task | undefined);
  /** Text protocol prompt template (Python str.format placeholders); default: the project's own. */
  promptTemplate?: string;
  /** Text protocol function list (parsed with Python json semantics); default: the project's own. */
  functions?: Py;
  /** Tool protocol: the tools offered (default DEFAULT_TOOL_NAMES, PROTOCOL.md's ten; EXTRA_TOOL_NAMES are opt-in). */
  tools?: readonly string[];
  /** Tool protocol system prompt; null for none; default: the project's own. */
  systemPrompt?: string | null;
  /** Default: env/graders' grade(). */
  grader?: Grader;
  rubric?: Rubric;
  /** Defaults for reset(). */
  maxRounds?: number;
  writes?: WritesMode;
}

/** Everything episodes share: build once, then create many MedAgentEnv over it. */
export class EnvConfig {
  readonly backend: Backend;
  readonly router: UrlRouter;
  readonly textPrompt: TextPrompt;
  readonly systemPrompt: string | null;
  readonly toolNames: readonly string[];
  readonly grader: Grader;
  readonly rubric: Rubric;
  readonly maxRounds: number;
  readonly writes: WritesMode;
  private readonly lookup: (id: string) => Task | undefined;

  constructor(options: EnvOptions) {
    this.backend = options.backend ?? embedded(options);
    const apiBase = this.backend.apiBase;
    this.router = new UrlRouter(apiBase);
    this.textPrompt =
      options.promptTemplate === undefined && options.functions === undefined
        ? defaultPrompt(apiBase)
        : new TextPrompt(options.promptTemplate ?? loadPromptTemplate(), options.functions ?? loadFunctions(), apiBase);
    this.systemPrompt = options.systemPrompt === undefined ? (defaultSystemPrompt ??= loadSystemPrompt()) : options.systemPrompt;
    this.grader = options.grader ?? grade;
    this.rubric = options.rubric ?? defaultRubric();
    this.toolNames = options.tools ?? DEFAULT_TOOL_NAMES;
    openAITools(this.toolNames); // fails early on an unknown tool name
    this.maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
    this.writes = options.writes ?? "execute";
    const t = options.tasks;
    if (typeof t === "function") this.lookup = t;
    else {
      const byId = new Map<string, Task>();
      for (const task of t ?? []) byId.set(task.id, task);
      this.lookup = (id) => byId.get(id);
    }
  }

  task(id: string): Task | undefined {
    return this.lookup(id);
  }
}

// The project's own prompt files are read once per process.
const defaultPrompts = new Map<string, TextPrompt>();
let defaultTemplate: { template: string; functions: Py } | undefined;
let defaultSystemPrompt: string | undefined;
function defaultPrompt(apiBase: string): TextPrompt {
  let p = defaultPrompts.get(apiBase);
  if (!p) {
    defaultTemplate ??= { template: loadPromptTemplate(), functions: loadFunctions() };
    p = new TextPrompt(defaultTemplate.template, defaultTemplate.functions, apiBase);
    defaultPrompts.set(apiBase, p);
  }
  return p;
}

function embedded(options: EnvOptions): Backend {
  if (!options.store) throw new EnvInputError("EnvOptions needs a backend or a store");
  const apiBase = options.apiBase ?? DEFAULT_API_BASE;
  return new EmbeddedBackend(options.store, options.service ?? new FhirService(options.store, { baseUrl: apiBase }), apiBase);
}

const ResetOptionsSchema = z.object({
  task: z.unknown().optional(),
  taskId: z.string().min(1).optional(),
  protocol: Protocol.default("text"),
  maxRounds: z.number().int().min(1).max(10_000).optional(),
  writes: WritesMode.optional(),
});

type ParsedReset = { protocol: Protocol; maxRounds?: number; writes?: WritesMode };

/** The common well-formed case is checked by hand (a cold zod parse costs tens of microseconds, more than
 *  the whole reset); anything else goes through the zod schema, which decides and names the bad field. */
function parseResetOptions(o: ResetOptions): ParsedReset {
  const m = o.maxRounds;
  if (
    (o.protocol === undefined || o.protocol === "text" || o.protocol === "tools") &&
    (m === undefined || (Number.isInteger(m) && m >= 1 && m <= 10_000)) &&
    (o.writes === undefined || o.writes === "execute" || o.writes === "record") &&
    (o.taskId === undefined || (typeof o.taskId === "string" && o.taskId.length > 0))
  ) {
    return { protocol: o.protocol ?? "text", maxRounds: m, writes: o.writes };
  }
  const parsed = ResetOptionsSchema.safeParse(o);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new EnvInputError(`invalid reset option ${issue.path.join(".") || "(options)"}: ${issue.message}`);
  }
  return parsed.data;
}

interface Episode {
  task: Task;
  protocol: Protocol;
  maxRounds: number;
  writes: WritesMode;
  conn: EpisodeConnection | undefined;
  messages: Message[];
  /** This step's new messages as handed to the caller: copies, see `say`. */
  observation: Message[];
  actions: Action[];
  info: EpisodeInfo;
  tools?: unknown[];
}

const TERMINATED: ReadonlySet<EpisodeStatus> = new Set(["completed", "invalid_action", "error"]);

/**
 * One episode at a time (reset starts a new one and rolls back the previous one).
 *
 *   const config = new EnvConfig({ backend: new EmbeddedBackend(store, service), tasks });
 *   const env = new MedAgentEnv(config);
 *   const { observation } = await env.reset({ taskId, protocol: "text" });
 *   const { observation: reply, terminated, truncated, info } = await env.step("GET http://...");
 *
 * Writes go to the episode's own scope (an overlay) and vanish when it ends; graders read the base.
 */
export class MedAgentEnv {
  readonly config: EnvConfig;
  private ep: Episode | undefined;
  private busy = false;

  constructor(config: EnvConfig | EnvOptions) {
    this.config = config instanceof EnvConfig ? config : new EnvConfig(config);
  }

  async reset(options: ResetOptions): Promise<ResetResult> {
    const parsed = parseResetOptions(options);
    const task = options.task ?? (options.taskId !== undefined ? this.config.task(options.taskId) : undefined);
    if (!task) throw new EnvInputError(options.taskId !== undefined ? `unknown task id ${JSON.stringify(options.taskId)}` : "reset needs a task or a taskId");
    await this.close();
    const cfg = this.config;
    const protocol = parsed.protocol;
    const messages: Message[] = [];
    let tools: unknown[] | undefined;
    if (protocol === "text") messages.push({ role: "user", content: cfg.textPrompt.render(task.context, task.instruction) });
    else {
      if (cfg.systemPrompt !== null) messages.push({ role: "system", content: cfg.systemPrompt });
      messages.push({ role: "user", content: task.context ? `Context: ${task.context}\nQuestion: ${task.instruction}` : task.instruction });
      tools = openAITools(cfg.toolNames);
    }
    const ep: Episode = {
      task,
      protocol,
      maxRounds: parsed.maxRounds ?? cfg.maxRounds,
      writes: parsed.writes ?? cfg.writes,
      conn: await cfg.backend.open(),
      messages,
      observation: [],
      actions: [],
      info: { taskId: task.id, status: "running", rounds: 0, invalidActions: 0 },
      tools,
    };
    this.ep = ep;
    const observation = messages.map((m) => ({ ...m }));
    return tools ? { observation, tools, info: { ...ep.info } } : { observation, info: { ...ep.info } };
  }

  async step(turn: AgentTurn): Promise<StepResult> {
    const ep = this.ep;
    if (!ep) throw new EpisodeStateError("no episode: call reset() first");
    if (ep.info.status !== "running") throw new EpisodeStateError(`the episode has ended (status ${ep.info.status})`);
    if (this.busy) throw new EpisodeStateError("another step of this episode is still running");
    this.busy = true;
    ep.observation = [];
    try {
      if (ep.protocol === "text") await this.textStep(ep, turn);
      else await this.toolStep(ep, turn);
      if (ep.info.status === "running" && ep.info.rounds >= ep.maxRounds) ep.info.status = "limit_reached";
    } catch (e) {
      if (e instanceof EnvInputError) {
        this.busy = false;
        throw e;
      }
      ep.info.status = "error";
      ep.info.error = e instanceof Error ? e.message : String(e);
    }
    try {
      if (ep.info.status !== "running") await this.finishEpisode(ep);
    } finally {
      this.busy = false;
    }
    const observation = ep.observation;
    ep.observation = [];
    const status = ep.info.status as EpisodeStatus;
    return {
      observation,
      reward: ep.info.score ?? 0,
      terminated: TERMINATED.has(status),
      truncated: status === "limit_reached" || status === "context_limit",
      info: { ...ep.info },
    };
  }

  /** Ends the running episode from outside with `context_limit` (the model ran out of context) or `error`. */
  async abort(status: "context_limit" | "error", reason?: string): Promise<EpisodeInfo> {
    const ep = this.ep;
    if (!ep) throw new EpisodeStateError("no episode: call reset() first");
    if (ep.info.status === "running") {
      ep.info.status = status;
      if (reason) ep.info.error = reason;
      await this.finishEpisode(ep);
    }
    return { ...ep.info };
  }

  /** The episode so far (or as it ended). */
  record(): EpisodeRecord {
    const ep = this.ep;
    if (!ep) throw new EpisodeStateError("no episode: call reset() first");
    return { task: ep.task, protocol: ep.protocol, messages: [...ep.messages], actions: [...ep.actions], info: { ...ep.info } };
  }

  get info(): EpisodeInfo | undefined {
    return this.ep ? { ...this.ep.info } : undefined;
  }

  /** Rolls back the episode's writes (if still open). The record stays readable. */
  async close(): Promise<void> {
    const conn = this.ep?.conn;
    if (conn && this.ep) {
      this.ep.conn = undefined;
      await conn.close();
    }
  }

  private async request(ep: Episode, method: "GET" | "POST", path: string, body?: string): Promise<FhirResponse> {
    if (!ep.conn) throw new Error("episode connection is closed");
    return await ep.conn.request(body === undefined ? { method, path } : { method, path, body });
  }

  /** Adds an environment message to the history and to this step's observation, as separate objects (a caller may change what it was handed). */
  private say(ep: Episode, message: Message): void {
    ep.messages.push(message);
    ep.observation.push({ ...message });
  }

  private async textStep(ep: Episode, turn: AgentTurn): Promise<void> {
    const content = typeof turn === "string" ? turn : (turn.content ?? "");
    ep.messages.push({ role: "assistant", content });
    ep.info.rounds++;
    const t = parseTextTurn(content);
    let reply: string | undefined;
    switch (t.kind) {
      case "GET": {
        const route = this.config.router.route(t.url);
        const action: Action = { kind: "GET", raw: content, url: route.url ?? t.url };
        if (route.ok) {
          const res = await this.request(ep, "GET", route.path);
          action.response = { status: res.status, text: res.text };
          if (res.status < 400) reply = getReply(res.text);
          else reply = getErrorReply(httpErrorMessage(res.status, route.url));
        } else reply = getErrorReply(route.error);
        ep.actions.push(action);
        break;
      }
      case "POST": {
        const accepted = t.payload !== undefined;
        const action: Action = { kind: "POST", raw: content, url: t.url, accepted };
        if (accepted) action.body = toJs(t.payload!, { intsAsNumbers: true });
        reply = accepted ? POST_ACCEPTED : POST_INVALID;
        if (accepted && ep.writes === "execute") {
          const route = this.config.router.route(t.url);
          if (route.ok) {
            const res = await this.request(ep, "POST", route.path, t.bodyText);
            action.response = { status: res.status, text: res.text };
          }
        }
        ep.actions.push(action);
        break;
      }
      case "FINISH":
        ep.actions.push({ kind: "FINISH", raw: content });
        ep.info.status = "completed";
        ep.info.result = t.result;
        break;
      case "INVALID":
        ep.actions.push({ kind: "INVALID", raw: content });
        ep.info.invalidActions++;
        ep.info.status = "invalid_action";
        break;
    }
    if (reply !== undefined) {
      ep.actions[ep.actions.length - 1]!.reply = reply;
      this.say(ep, { role: "user", content: reply });
    }
  }

  private async toolStep(ep: Episode, turn: AgentTurn): Promise<void> {
    const parsed = Message.safeParse(typeof turn === "string" ? { role: "assistant", content: turn } : turn);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new EnvInputError(`invalid assistant message: ${issue.path.join(".") || "(message)"}: ${issue.message}`);
    }
    const msg = parsed.data;
    if (msg.role !== "assistant") throw new EnvInputError(`invalid assistant message: role: expected "assistant", got ${JSON.stringify(msg.role)}`);
    ep.messages.push(msg);
    ep.info.rounds++;
    const calls = msg.tool_calls ?? [];
    if (calls.length === 0) {
      ep.actions.push({ kind: "INVALID", raw: JSON.stringify({ content: msg.content }) });
      ep.info.invalidActions++;
      ep.info.status = "invalid_action";
      return;
    }
    const base = this.config.backend.apiBase;
    for (const call of calls) {
      const raw = JSON.stringify({ name: call.function.name, arguments: call.function.arguments });
      const plan = planToolCall(call.function.name, call.function.arguments, this.config.toolNames);
      let reply: string;
      switch (plan.kind) {
        case "FINISH":
          ep.actions.push({ kind: "FINISH", raw, tool: plan.tool });
          ep.info.status = "completed";
          ep.info.result = JSON.stringify(plan.value);
          return;
        case "INVALID":
          ep.actions.push(plan.create ? { kind: "POST", raw, tool: plan.tool, accepted: false } : { kind: "INVALID", raw, tool: plan.tool });
          ep.info.invalidActions++;
          reply = plan.error;
          break;
        case "GET": {
          const res = await this.request(ep, "GET", plan.path);
          ep.actions.push({ kind: "GET", raw, tool: plan.tool, url: base + plan.path, response: { status: res.status, text: res.text } });
          reply = res.text;
          break;
        }
        case "POST": {
          const action: Action = { kind: "POST", raw, tool: plan.tool, url: base + plan.path, body: plan.body, accepted: true };
          if (ep.writes === "execute") {
            const res = await this.request(ep, "POST", plan.path, JSON.stringify(plan.body));
            action.response = { status: res.status, text: res.text };
            reply = res.text;
          } else reply = RECORDED_REPLY;
          ep.actions.push(action);
          break;
        }
      }
      ep.actions[ep.actions.length - 1]!.reply = reply;
      this.say(ep, { role: "tool", tool_call_id: call.id, content: reply });
    }
  }

  private async finishEpisode(ep: Episode): Promise<void> {
    const info = ep.info;
    let grade: GradeResult;
    if (info.status !== "completed") {
      const detail = `episode ended with status ${info.status}; only completed (FINISHed) episodes are graded`;
      grade = { reward: 0, checks: [{ name: "status", ok: false, detail }], partialCredit: 0 };
    } else {
      try {
        const input: GradeInput = {
          task: ep.task,
          protocol: ep.protocol,
          status: info.status,
          actions: ep.actions,
          base: await this.config.backend.gradingReader(ep.task),
          apiBase: this.config.backend.apiBase,
        };
        if (info.result !== undefined) input.result = info.result;
        grade = this.config.grader(input);
      } catch (e) {
        const detail = `grading failed: ${e instanceof Error ? e.message : String(e)}`;
        grade = { reward: 0, checks: [{ name: "grader", ok: false, detail }], partialCredit: 0 };
      }
    }
    const score = this.config.rubric.score({ grade, info });
    info.reward = grade.reward === 1 && info.status === "completed" ? 1 : 0;
    info.checks = grade.checks;
    info.partialCredit = grade.partialCredit;
    info.metrics = score.metrics;
    info.score = score.reward;
    await this.close();
  }
}

/** Tool reply for a create call when writes are recorded only. */
export const RECORDED_REPLY = "POST request accepted (recorded; not executed against the EHR).";
