// One stand-in turn: the scripted expert's next request, or the episode's planned mistake in its place.
//
// The expert replays its plan from the environment's replies (rollout/expert). After a mistake the real
// replies no longer line up with what the expert asked for, so each episode carries `ops`, one letter
// per request it issued, telling how the expert sees the real reply to it:
//   r  the real reply          a  pretend it was accepted (a malformed POST the model believes went through)
//   d  drop it (a malformed search call: the expert asks again)   f  no real request, pretend accepted (a skipped POST)
import { Rng } from "../../env/util/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { DEFAULT_API_BASE, type Message, type PolicyInput, type ToolCall } from "../../env/core/index.ts";
import { ExpertError, nextRequests, parseReply, planFor, replyMessages, taskMrn, taskNow, type Reply, type Request } from "../expert/index.ts";
import { apiBaseFromPrompt, renderText } from "../expert/text.ts";
import { batchesWrites, calculatorOffered, countToolCalls, finishArguments, localFilter, searchableWith, toolCall } from "../expert/tools.ts";
import { textDigest } from "./digest.ts";
import { aroundFinish, brokenJson, chatter, proseAnswer, toolChatter, unneededOrder, wrongAnswer, wrongBody, type EpisodePlan } from "./mistakes.ts";

export interface EpisodeState {
  /** Names the episode (its prompt and sample): tool call ids are derived from it. */
  id: string;
  plan: EpisodePlan;
  ops: string;
  /** Whether the planned mistake has been made. */
  applied: boolean;
}

export interface TurnInput extends Pick<PolicyInput, "task" | "protocol" | "tools"> {
  messages: readonly Message[];
  /** The episode's round limit as the expert assumes it (optional extra orders fit in it). */
  maxRounds: number;
}

export interface TurnOutput {
  message: Message;
  /** The state after this turn; undefined when the turn ends the episode (FINISH, no action). */
  next: EpisodeState | undefined;
  /** What the turn did, for logs and tests: "expert", a mistake name, or "gave_up". */
  did: string;
}

const ACCEPTED: Reply = { ok: true, json: null };

/** State for a conversation the stand-in has no record of (evicted, or played by someone else): all replies real, no mistake. */
export function orphanState(id: string, messages: readonly Message[], protocol: Protocol): EpisodeState {
  return { id, plan: { mistake: null, at: 0, seed: 0 }, ops: "r".repeat(replyMessages(messages, protocol).length), applied: true };
}

// Every turn replays the expert over all replies so far.
function expertReplies(state: EpisodeState, real: (Message | undefined)[], protocol: Protocol): Reply[] {
  const out: Reply[] = [];
  let j = 0;
  const take = () => {
    const r = real[j++];
    if (r !== undefined) out.push(parseReply(r, protocol));
  };
  for (const op of state.ops) {
    if (op === "r") take();
    else if (op === "a") {
      j++;
      out.push(ACCEPTED);
    } else if (op === "d") j++;
    else out.push(ACCEPTED);
  }
  while (j < real.length) take();
  return out;
}

export function playTurn(input: TurnInput, state: EpisodeState): TurnOutput {
  try {
    return input.protocol === "text" ? textTurn(input, state) : toolTurn(input, state);
  } catch (e) {
    if (!(e instanceof ExpertError)) throw e;
    // The expert cannot go on from here (e.g. a request failed): give up the way a model would.
    const finish = input.protocol === "text" ? { role: "assistant" as const, content: "FINISH([])" } : toolMessage(null, [finishCall([], callIds(state, input.messages), 0)]);
    return { message: finish, next: undefined, did: "gave_up" };
  }
}

const firstPost = (requests: readonly Request[]) => requests.findIndex((r) => r.kind === "POST");

function textTurn(input: TurnInput, state: EpisodeState): TurnOutput {
  const { task, messages } = input;
  const plan = planFor(task);
  const apiBase = apiBaseFromPrompt(messages) ?? DEFAULT_API_BASE;
  const real = replyMessages(messages, "text");
  let ops = state.ops;
  let applied = state.applied;
  // A skipped POST is the turn's mistake even though the turn sent is the expert's next one.
  let skipped = false;
  const reply = (content: string, op: string | null, did: string): TurnOutput => ({
    message: { role: "assistant", content },
    next: op === null ? undefined : { ...state, ops: ops + op, applied },
    did: skipped ? "missing_post" : did,
  });
  for (;;) {
    const replies = expertReplies({ ...state, ops }, real, "text");
    const [request] = nextRequests(plan, task, replies, { batchWrites: false, canPage: true, maxRounds: input.maxRounds });
    if (!request) throw new ExpertError("the expert has no next request");
    const mistake = applied ? null : strikes(state, ops.length, [request], task);
    const rng = new Rng(state.plan.seed);
    if (!mistake) {
      if (request.kind === "FINISH") return reply(renderText(request, apiBase), null, "expert");
      return reply(renderText(request, apiBase), "r", "expert");
    }
    applied = true;
    switch (mistake) {
      case "wrong_answer":
        return reply(renderText({ kind: "FINISH", answer: wrongAnswer((request as { answer: unknown[] }).answer, rng) }, apiBase), null, mistake);
      case "text_around_finish":
        return reply(aroundFinish(renderText(request, apiBase), rng), null, mistake);
      case "premature_finish":
        return reply("FINISH([])", null, mistake);
      case "invalid_action":
        return reply(chatter(renderText(request, apiBase), rng), null, mistake);
      case "wrong_post_value": {
        const post = request as Extract<Request, { kind: "POST" }>;
        return reply(renderText({ ...post, body: wrongBody(post.body, rng, task.suite === "mab-v2") }, apiBase), "r", mistake);
      }
      case "malformed_post": {
        const post = request as Extract<Request, { kind: "POST" }>;
        return reply(`POST ${apiBase}${post.resourceType}\n${brokenJson(JSON.stringify(post.body), rng)}`, "a", mistake);
      }
      case "missing_post":
        ops += "f";
        skipped = true;
        continue;
      case "unneeded_post":
        // The expert never asked for it: its reply is dropped, and the next turn is the FINISH again.
        return reply(renderText({ kind: "POST", resourceType: "ServiceRequest", body: unneededOrder(taskMrn(task), taskNow(task)) }, apiBase), "d", mistake);
      case "malformed_call":
        throw new ExpertError("malformed_call is a tool-protocol mistake");
    }
  }
}

/**
 * Whether the planned mistake strikes now, given the requests the expert wants to send next; which
 * mistake (a POST mistake with no POST left falls back to a wrong FINISH value).
 */
function strikes(state: EpisodeState, issued: number, requests: readonly Request[], task: Task): EpisodePlan["mistake"] {
  const suite = task.suite;
  // A patient lookup by name has no patient to order for.
  const hasMrn = task.eval_MRN !== undefined || /\bS\d{7}\b/.test(task.instruction);
  const m = state.plan.mistake;
  if (!m) return null;
  const finish = requests.find((r) => r.kind === "FINISH");
  const posting = firstPost(requests) >= 0;
  // At the FINISH with the planned chance gone (no POST to spoil, nothing left to skip): a wrong answer
  // where the answer is graded, else an order nobody asked for (mab-v2 graders judge the orders, not
  // the answer, except task3's averages: GRADERS.md), else prose instead of an action.
  const answerGraded = suite === "mab-v1" || suite === "workflows" || task.type === "task3";
  const atFinish = finish && finish.answer.length > 0 && answerGraded ? "wrong_answer" : hasMrn ? "unneeded_post" : "invalid_action";
  switch (m) {
    case "wrong_answer":
      if (!answerGraded && posting) return "wrong_post_value";
      return finish ? atFinish : null;
    case "text_around_finish":
      return finish ? m : null;
    case "wrong_post_value":
    case "missing_post":
    case "malformed_post":
      if (posting) return m;
      return finish ? atFinish : null;
    case "premature_finish":
      if (posting) return m;
      if (finish) return atFinish;
      return issued >= state.plan.at ? m : null;
    case "invalid_action":
      return issued >= state.plan.at || finish ? m : null;
    case "unneeded_post":
      return finish ? m : null;
    case "malformed_call":
      if (finish) return atFinish;
      return requests[0]?.kind === "GET" ? m : null;
  }
}

/** Tool call ids of this turn: the episode's n-th call, whatever the environment's replies said (they carry fresh bundle ids). */
type CallIds = (i: number) => string;
function callIds(state: EpisodeState, messages: readonly Message[]): CallIds {
  const before = countToolCalls(messages);
  return (i) => `call_${textDigest(`${state.id}:${before + i}`).slice(0, 24)}`;
}
const finishCall = (answer: unknown[], ids: CallIds, i: number): ToolCall => ({ id: ids(i), type: "function", function: { name: "finish", arguments: finishArguments(answer) } });
const toolMessage = (content: string | null, calls: ToolCall[]): Message => (calls.length ? { role: "assistant", content, tool_calls: calls } : { role: "assistant", content });

function toolTurn(input: TurnInput, state: EpisodeState): TurnOutput {
  const { task, messages } = input;
  const plan = planFor(task);
  const real = replyMessages(messages, "tools");
  const ids = callIds(state, messages);
  const searchable = searchableWith(input.tools);
  const tc = (request: Request, id: string) => toolCall(request, id, input.tools);
  let ops = state.ops;
  let applied = state.applied;
  let skipped = false;
  for (;;) {
    const replies = expertReplies({ ...state, ops }, real, "tools");
    const requests = nextRequests(plan, task, replies, { batchWrites: batchesWrites(input.tools), canPage: false, maxRounds: input.maxRounds, searchable, canCalculate: calculatorOffered(input.tools), localFilter });
    const mistake = applied ? null : strikes(state, ops.length, requests, task);
    const rng = new Rng(state.plan.seed);
    const broken = (call: ToolCall): ToolCall => ({ ...call, function: { ...call.function, arguments: brokenJson(call.function.arguments, rng) } });
    const calls: ToolCall[] = [];
    let content: string | null = null;
    let ended = false;
    const add = (request: Request, op: string) => {
      calls.push(tc(request, ids(calls.length)));
      if (request.kind === "FINISH") ended = true;
      else ops += op;
    };
    if (mistake) applied = true;
    switch (mistake) {
      case null:
        for (const r of requests) add(r, "r");
        break;
      case "wrong_answer":
        for (const r of requests) {
          if (r.kind !== "FINISH") add(r, "r");
          else {
            calls.push(finishCall(wrongAnswer(r.answer, rng), ids, calls.length));
            ended = true;
          }
        }
        break;
      case "text_around_finish":
        // The answer written out instead of called: no tool call at all.
        content = proseAnswer(requests.find((r): r is Extract<Request, { kind: "FINISH" }> => r.kind === "FINISH")?.answer ?? []);
        ended = true;
        break;
      case "premature_finish":
        calls.push(finishCall([], ids, 0));
        ended = true;
        break;
      case "invalid_action":
        content = toolChatter(rng);
        ended = true;
        break;
      case "malformed_call":
        calls.push(broken(tc(requests[0]!, ids(0))));
        ops += "d";
        break;
      case "unneeded_post":
        calls.push(tc({ kind: "POST", resourceType: "ServiceRequest", body: unneededOrder(taskMrn(task), taskNow(task)) }, ids(0)));
        ops += "d";
        for (const r of requests) add(r, "r");
        break;
      case "wrong_post_value":
      case "malformed_post":
      case "missing_post": {
        const target = firstPost(requests);
        requests.forEach((r, i) => {
          if (i !== target) return add(r, "r");
          const post = r as Extract<Request, { kind: "POST" }>;
          if (mistake === "missing_post") ops += "f";
          else if (mistake === "wrong_post_value") add({ ...post, body: wrongBody(post.body, rng, task.suite === "mab-v2") }, "r");
          else {
            calls.push(broken(tc(post, ids(calls.length))));
            ops += "a";
          }
        });
        break;
      }
    }
    // A skipped POST that was the whole batch: the model goes straight on to what follows it.
    if (calls.length === 0 && !ended) {
      skipped = true;
      continue;
    }
    return { message: toolMessage(content, calls), next: ended ? undefined : { ...state, ops, applied }, did: mistake ?? (skipped ? "missing_post" : "expert") };
  }
}
