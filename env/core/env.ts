// MedAgentEnv: one gym-style episode at a time over a shared backend (reset/step/close/record).
import { FhirService, type FhirHandler, type FhirResponse, type FhirStore } from "../fhir/index.ts";
import { grade, type GradeInput, type GradeResult, type Grader } from "../graders/index.ts";
import {
  calculate,
  DEFAULT_TOOL_NAMES,
  historyActions,
  MEDARC_TOOL_NAMES,
  medarcHistory,
  originalHistory,
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
  ThinkBlocks,
  UrlRouter,
  type Action,
  type EpisodeStatus,
  type OpenAITool,
  type ToolCallPlan,
  type TraceStep,
  type V2Semantics,
} from "../protocol/index.ts";
import * as py from "../python/index.ts";
import { type Py, toJs } from "../python/index.ts";
import { firstIssue } from "../util/index.ts";
import type { Task } from "../tasks/index.ts";
import { DEFAULT_API_BASE, EmbeddedBackend, type Backend, type EpisodeConnection } from "./backend.ts";
import { EnvInputError, EpisodeStateError } from "./errors.ts";
import { readAgentTurn } from "./reasoning.ts";
import { defaultRubric, type Rubric } from "./rubric.ts";
import {
  Message,
  WritesMode,
  type AgentTurn,
  type EpisodeInfo,
  type EpisodeRecord,
  ResetOptions,
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
  /** Tool protocol: the tools offered (default: the original V2's eleven, DEFAULT_TOOL_NAMES). */
  tools?: readonly string[];
  /** Tool protocol: reference schemas shown to the model instead of ehrgym's own (`loadToolSchemas`); they name the tools offered. */
  toolSchemas?: OpenAITool[];
  /** Tool protocol: the original V2 loop and verdicts (default) or the verifiers port's (`medarc`). */
  v2Semantics?: V2Semantics;
  /** Tool protocol system prompt; null for none; default: the project's own. */
  systemPrompt?: string | null;
  /** Default: env/graders' grade(). */
  grader?: Grader;
  rubric?: Rubric;
  /** How an inline `<think>` block is read: as reasoning (default) or as the official harness reads the text. */
  thinkBlocks?: ThinkBlocks;
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
  /** The OpenAI `tools` JSON offered at reset. */
  readonly toolsJson: OpenAITool[];
  readonly v2Semantics: V2Semantics;
  readonly thinkBlocks: ThinkBlocks;
  readonly grader: Grader;
  readonly rubric: Rubric;
  readonly maxRounds: number;
  readonly writes: WritesMode;
  /** The task `reset({taskId})` names. */
  readonly task: (id: string) => Task | undefined;

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
    this.v2Semantics = options.v2Semantics ?? "original";
    const think = ThinkBlocks.safeParse(options.thinkBlocks ?? "split");
    if (!think.success) throw new EnvInputError(`thinkBlocks: expected split or official, got ${JSON.stringify(options.thinkBlocks)}`);
    this.thinkBlocks = think.data;
    this.toolNames = options.toolSchemas?.map((t) => t.function.name) ?? options.tools ?? (this.v2Semantics === "medarc" ? MEDARC_TOOL_NAMES : DEFAULT_TOOL_NAMES);
    this.toolsJson = options.toolSchemas ?? openAITools(this.toolNames, this.v2Semantics); // fails early on an unknown tool name
    this.maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
    this.writes = options.writes ?? "execute";
    const t = options.tasks;
    const byId = new Map(typeof t === "function" ? [] : [...(t ?? [])].map((task) => [task.id, task]));
    this.task = typeof t === "function" ? t : (id) => byId.get(id);
  }
}

// The project's own prompts are read once per process (and FHIR base).
const defaultPrompts = new Map<string, TextPrompt>();
let defaultSystemPrompt: string | undefined;
function defaultPrompt(apiBase: string): TextPrompt {
  let p = defaultPrompts.get(apiBase);
  if (!p) defaultPrompts.set(apiBase, (p = new TextPrompt(loadPromptTemplate(), loadFunctions(), apiBase)));
  return p;
}

function embedded(options: EnvOptions): Backend {
  if (!options.store) throw new EnvInputError("EnvOptions needs a backend or a store");
  const apiBase = options.apiBase ?? DEFAULT_API_BASE;
  return new EmbeddedBackend(options.store, options.service ?? new FhirService(options.store, { baseUrl: apiBase }), apiBase);
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
  /** Tool protocol: the run as the original V2 agent loop yields it (graders' input, `originalHistory`). */
  trace: TraceStep[];
}

const TERMINATED: ReadonlySet<EpisodeStatus> = new Set(["completed", "invalid_action", "error"]);

/**
 * An equal string that shares no storage with `text`. Encoding a string (JSON.stringify, MessagePack)
 * flattens it in place; a FHIR reply in the history is a rope of the store's cached entries, so were
 * the observation the same string, encoding it would leave a flat copy of every reply with each open
 * episode until it ends: under a reward server's load those copies are promoted to the old generation
 * and its collections make the step p99 (test/core/episode-memory.test.ts; scripts/bench/NOTES.md).
 */
const detached = (text: string): string => (" " + text).slice(1);

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
    const checked = ResetOptions.safeParse(options);
    if (!checked.success) throw new EnvInputError(`invalid reset option ${firstIssue(checked.error, "(options)")}`);
    const parsed = checked.data;
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
      messages.push({ role: "user", content: v2UserMessage(task.instruction, task.context, cfg.v2Semantics) });
      tools = cfg.toolsJson;
    }
    const ep: Episode = {
      task,
      protocol,
      // A task that states its round limit in its first message runs with that limit.
      maxRounds: task.max_rounds ?? parsed.maxRounds ?? cfg.maxRounds,
      writes: parsed.writes ?? cfg.writes,
      conn: await cfg.backend.open(),
      messages,
      observation: [],
      actions: [],
      info: { taskId: task.id, status: "running", rounds: 0, invalidActions: 0 },
      tools,
      trace: [],
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
      try {
        if (ep.protocol === "text") await this.textStep(ep, turn);
        else await this.toolStep(ep, turn);
        if (ep.info.status === "running" && ep.info.rounds >= ep.maxRounds) ep.info.status = "limit_reached";
      } catch (e) {
        if (e instanceof EnvInputError) throw e;
        ep.info.status = "error";
        ep.info.error = e instanceof Error ? e.message : String(e);
      }
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

  /** The turn as this environment reads it: reasoning apart from the action text (`readAgentTurn`). */
  readTurn(turn: AgentTurn): AgentTurn {
    return readAgentTurn(turn, this.config.thinkBlocks);
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

  /** The environment's reply to the last action: recorded on it, added to the history and to this step's
   *  observation, as separate objects (a caller may change what it was handed). */
  private say(ep: Episode, content: string, toolCallId?: string): void {
    ep.actions[ep.actions.length - 1]!.reply = content;
    const message: Message = toolCallId === undefined ? { role: "user", content } : { role: "tool", tool_call_id: toolCallId, content };
    ep.messages.push(message);
    ep.observation.push({ ...message, content: detached(content) });
  }

  private async textStep(ep: Episode, turn: AgentTurn): Promise<void> {
    const read = this.readTurn(turn);
    const content = typeof read === "string" ? read : (read.content ?? "");
    const reasoning = typeof read === "string" ? undefined : read.reasoning_content;
    ep.messages.push(typeof reasoning === "string" ? { role: "assistant", content, reasoning_content: reasoning } : { role: "assistant", content });
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
    if (reply !== undefined) this.say(ep, reply);
  }

  private async toolStep(ep: Episode, turn: AgentTurn): Promise<void> {
    const parsed = Message.safeParse(typeof turn === "string" ? { role: "assistant", content: turn } : turn);
    if (!parsed.success) throw new EnvInputError(`invalid assistant message: ${firstIssue(parsed.error, "(message)")}`);
    const msg = this.readTurn(parsed.data) as Message;
    if (msg.role !== "assistant") throw new EnvInputError(`invalid assistant message: role: expected "assistant", got ${JSON.stringify(msg.role)}`);
    ep.messages.push(msg);
    ep.info.rounds++;
    if (msg.content) ep.trace.push({ type: "message", content: msg.content });
    const calls = msg.tool_calls ?? [];
    if (calls.length === 0) {
      // The original loop stops when a turn makes no tool call; the run is graded with the answer "[]".
      ep.actions.push({ kind: "INVALID", raw: JSON.stringify({ content: msg.content }) });
      ep.info.invalidActions++;
      ep.info.status = "invalid_action";
      ep.info.error = "a turn without tool calls ends the run (graded with the answer [])";
      return;
    }
    if (this.config.v2Semantics === "medarc") return await this.medarcToolTurn(ep, msg, calls);
    for (const call of calls) {
      const { name, arguments: argsText } = call.function;
      const raw = JSON.stringify({ name, arguments: argsText });
      const plan = planToolCall(name, argsText, this.config.toolNames);
      // The original raises on arguments that are not JSON before it logs the call.
      if (!(plan.kind === "FAIL" && plan.badJson)) ep.trace.push({ type: "tool_call", name, arguments: argsText, callId: call.id });
      const outcome = await this.runCall(ep, plan, raw);
      if ("fail" in outcome) {
        // Any exception in the original loop ends the run; its answer is then "[]".
        ep.info.invalidActions++;
        ep.info.status = "invalid_action";
        ep.info.error = `${name}: ${outcome.fail} (the run ends, graded with the answer [])`;
        return;
      }
      this.say(ep, outcome.reply, call.id);
      ep.trace.push({ type: "tool_output", callId: call.id });
      if (plan.kind === "FINISH") {
        // The original returns right after finish's output: later calls of the turn never run.
        ep.info.status = "completed";
        ep.info.result = py.jsonDumps(plan.value);
        return;
      }
    }
  }

  /** The verifiers port's turn: every call runs (a failing one answers "Error: ..."); a malformed name or
   *  argument text is rewritten in the history as the port does; a `finish` call, even a failing one, ends
   *  the run after the turn, with the last successful finish's value (none: graded with "[]"). */
  private async medarcToolTurn(ep: Episode, msg: Message, calls: NonNullable<Message["tool_calls"]>): Promise<void> {
    // The port's loop (verifiers' MultiTurnEnv) stops at its turn limit before the environment answers:
    // the last turn's calls never run, a finish among them included.
    if (ep.info.rounds >= ep.maxRounds) return;
    let finished: string | undefined;
    let finishCalled = false;
    const rewritten = calls.map((c) => ({ ...c, function: { ...c.function } }));
    msg.tool_calls = rewritten;
    for (const call of rewritten) {
      const { name } = call.function;
      const raw = JSON.stringify({ name, arguments: call.function.arguments });
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name) || !this.config.toolNames.includes(name)) {
        call.function = { name: "calculator", arguments: "{}" };
        ep.actions.push({ kind: "INVALID", raw, tool: name });
        ep.info.invalidActions++;
        this.say(ep, `Error: Invalid tool formatting for '${name}'.`, call.id);
        continue;
      }
      let argsText = call.function.arguments;
      const once = py.tryJsonLoads(argsText);
      if (argsText.trim() === "" || !once.ok) argsText = call.function.arguments = "{}";
      else if (typeof once.value === "string") argsText = py.tryJsonLoads(once.value).ok ? once.value : (call.function.arguments = "{}");
      const plan = planToolCall(name, argsText, this.config.toolNames, "medarc");
      const outcome = await this.runCall(ep, plan, raw);
      if ("fail" in outcome) ep.info.invalidActions++;
      this.say(ep, "fail" in outcome ? `Error: ${outcome.fail}` : outcome.reply, call.id);
      if (name === "finish") {
        finishCalled = true;
        if (!("fail" in outcome) && plan.kind === "FINISH") finished = py.jsonDumps(plan.value);
      }
    }
    if (finished !== undefined) {
      ep.info.status = "completed";
      ep.info.result = finished;
    } else if (finishCalled) {
      ep.info.status = "invalid_action";
      ep.info.error = "finish failed, which ends the port's run (graded with the answer [])";
    }
  }

  /** The calculator's clock: the reproducible FHIR stamps' fixed time, else the wall clock (undefined). */
  private get calculatorNow(): string | undefined {
    const b = this.config.backend;
    return b instanceof EmbeddedBackend && b.service instanceof FhirService ? b.service.fixedTime : undefined;
  }

  /** Runs one planned call; its reply is what the original's tool returns, as `str(result)` (Python). */
  private async runCall(ep: Episode, plan: ToolCallPlan, raw: string): Promise<{ reply: string } | { fail: string }> {
    const base = this.config.backend.apiBase;
    switch (plan.kind) {
      case "FAIL":
        ep.actions.push(plan.tool.endsWith("_create") ? { kind: "POST", raw, tool: plan.tool, accepted: false } : { kind: "INVALID", raw, tool: plan.tool });
        return { fail: plan.error };
      case "FINISH":
        ep.actions.push({ kind: "FINISH", raw, tool: plan.tool });
        return { reply: py.pyStr(plan.value) };
      case "CALC":
        ep.actions.push({ kind: "INVALID", raw, tool: plan.tool });
        try {
          return { reply: calculate(plan.expression, { now: this.calculatorNow }) };
        } catch (e) {
          return { fail: `calculator: ${(e as Error).message}` };
        }
      case "GET": {
        const res = await this.request(ep, "GET", plan.path);
        ep.actions.push({ kind: "GET", raw, tool: plan.tool, url: base + plan.path, response: { status: res.status, text: res.text } });
        return pyJsonReply(res.text);
      }
      case "POST": {
        const action: Action = { kind: "POST", raw, tool: plan.tool, url: base + plan.path, body: plan.args, accepted: true };
        ep.actions.push(action);
        if (ep.writes !== "execute") return { reply: RECORDED_REPLY };
        const res = await this.request(ep, "POST", plan.path, JSON.stringify(plan.body));
        action.response = { status: res.status, text: res.text };
        // The original's create calls raise_for_status().
        if (res.status >= 400) {
          action.accepted = false;
          return { fail: `${res.status} error for url: ${base}${plan.path}` };
        }
        return pyJsonReply(res.text);
      }
    }
  }

  private async finishEpisode(ep: Episode): Promise<void> {
    const info = ep.info;
    const tools = ep.protocol === "tools";
    let grade: GradeResult;
    if (!tools && info.status !== "completed") {
      const detail = `episode ended with status ${info.status}; only completed (FINISHed) episodes are graded`;
      grade = { reward: 0, checks: [{ name: "status", ok: false, detail }], partialCredit: 0 };
    } else {
      try {
        const apiBase = this.config.backend.apiBase;
        const input: GradeInput = {
          task: ep.task,
          protocol: ep.protocol,
          status: info.status,
          actions: tools ? historyActions(this.v2History(ep)) : ep.actions,
          base: await this.config.backend.gradingReader(ep.task),
          apiBase,
        };
        const chart = ep.writes === "execute" ? ep.conn?.chart?.() : undefined;
        if (chart) input.chart = chart;
        // The tool protocol grades every run: "[]" when no answer was given (the original's default).
        if (tools) {
          input.result = info.result ?? "[]";
          input.v2Semantics = this.config.v2Semantics;
        } else if (info.result !== undefined) input.result = info.result;
        grade = this.config.grader(input);
      } catch (e) {
        const detail = `grading failed: ${e instanceof Error ? e.message : String(e)}`;
        grade = { reward: 0, checks: [{ name: "grader", ok: false, detail }], partialCredit: 0 };
      }
    }
    const score = this.config.rubric.score({ grade, info });
    info.reward = grade.reward === 1 && (tools || info.status === "completed") ? 1 : 0;
    info.checks = grade.checks;
    info.partialCredit = grade.partialCredit;
    if (grade.checkpoints) info.checkpoints = grade.checkpoints;
    info.metrics = score.metrics;
    info.score = score.reward;
    await this.close();
  }

  /** The graders' agent items of a tool-protocol run (PROTOCOL.md section 2). */
  private v2History(ep: Episode): string[] {
    const apiBase = this.config.backend.apiBase;
    if (this.config.v2Semantics === "medarc") return medarcHistory(ep.messages.filter((m) => m.role === "assistant" || m.role === "tool"), apiBase);
    return originalHistory(ep.trace, apiBase);
  }
}

/** Tool reply for a create call when writes are recorded only. */
export const RECORDED_REPLY = "POST request accepted (recorded; not executed against the EHR).";

/** The original's user message; the verifiers port adds a line after the context. */
export function v2UserMessage(instruction: string, context: string | undefined, semantics: V2Semantics = "original"): string {
  let content = `<instruction>\n${instruction}\n</instruction>\n`;
  if (context) {
    content += `<context>\n${context}\n</context>\n`;
    if (semantics === "medarc") content += "Make sure to format the tool calls correctly and use the finish tool when you have the final answer.\n";
  }
  return content;
}

/** A FHIR reply as the original's tool returns it: str() of res.json(). */
function pyJsonReply(text: string): { reply: string } | { fail: string } {
  try {
    return { reply: py.pyStr(py.jsonLoads(text)) };
  } catch (e) {
    return { fail: `the reply is not JSON: ${(e as Error).message}` };
  }
}

