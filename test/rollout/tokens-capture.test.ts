// `--capture tokens`: vLLM's token request fields sent through the real openai client (extra body
// fields) to the stand-in, which answers them with vLLM's names and shapes; rows keep each turn's ids
// and logprobs, consistent with the tokenizer (o200k_base) on the chat as rollout/chatml.ts renders it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "gpt-tokenizer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTurnTokens } from "../../rollout/model/tokens.ts";
import { assistantBody, IM_END, IM_START, renderChat } from "../../rollout/chatml.ts";
import { EpisodeRow } from "../../rollout/index.ts";
import { fullPrompts, trajectoryTokens } from "../../rollout/tokens.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, EHR_FLAGS, smallWorld } from "./rollout-fixture.ts";
import { chatBody, client, firstRequest } from "./teacher-world.ts";
import { envConfig } from "./world.ts";
import { ModelError } from "../../env/core/index.ts";
import { splitReasoning } from "../../env/protocol/index.ts";

const world = smallWorld(1);
let teacher: TeacherServer;
beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 5 });
});
afterAll(async () => {
  await teacher?.close();
});

// The rendered text's tokens, the ChatML markers as special tokens and anything else as text.
const imStart = encode(IM_START, { allowedSpecial: new Set([IM_START]) })[0]!;
const imEnd = encode(IM_END, { allowedSpecial: new Set([IM_END]) })[0]!;
const tokensOf = (text: string) =>
  text.split(/(<\|im_start\|>|<\|im_end\|>)/).flatMap((part) =>
    part === IM_START ? [imStart] : part === IM_END ? [imEnd] : part ? encode(part, { allowedSpecial: new Set(), disallowedSpecial: new Set() }) : [],
  );

type VllmReply = { prompt_token_ids?: number[]; choices: { token_ids?: number[]; logprobs: { content: { token: string; logprob: number; bytes: number[] }[] } | null }[] };

describe("the stand-in answers vLLM's token fields", () => {
  it.each(["text", "tools"] as const)("%s protocol: prompt ids are the rendered chat's tokens, completion ids the reply's", async (protocol) => {
    const task = world.tasks.find((t) => t.suite === "mab-v2")!;
    const req = await firstRequest(envConfig(world.store), task, protocol);
    const body = { ...chatBody(req), logprobs: true, return_token_ids: true };
    const reply = (await client(teacher.url).chat.completions.create(body)) as unknown as VllmReply & { usage: { prompt_tokens: number; completion_tokens: number }; choices: { message: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] } }[] };
    const choice = reply.choices[0]!;
    expect(reply.prompt_token_ids).toEqual(tokensOf(renderChat(req.messages, req.tools)));
    expect(choice.token_ids).toEqual([...tokensOf(assistantBody(choice.message as never)), imEnd]);
    expect(choice.logprobs!.content).toHaveLength(choice.token_ids!.length);
    for (const c of choice.logprobs!.content) {
      expect(c.logprob).toBeLessThanOrEqual(0);
      expect(typeof c.token).toBe("string");
    }
    expect(reply.usage).toMatchObject({ prompt_tokens: reply.prompt_token_ids!.length, completion_tokens: choice.token_ids!.length });
    // What the runner reads of it.
    expect(readTurnTokens(reply)).toEqual({ prompt_ids: reply.prompt_token_ids, completion_ids: choice.token_ids, logprobs: choice.logprobs!.content.map((c) => c.logprob) });
  });

  it("answers each field alone, tokens as ids on request, and refuses top_logprobs without logprobs", async () => {
    const task = world.tasks[0]!;
    const req = await firstRequest(envConfig(world.store), task, "text");
    const openai = client(teacher.url);
    const ids = (await openai.chat.completions.create({ ...chatBody(req), return_token_ids: true } as never)) as unknown as VllmReply;
    expect(ids.prompt_token_ids!.length).toBeGreaterThan(0);
    expect(ids.choices[0]!.logprobs).toBeNull();
    const lp = (await openai.chat.completions.create({ ...chatBody(req), logprobs: true, return_tokens_as_token_ids: true } as never)) as unknown as VllmReply;
    expect(lp.prompt_token_ids).toBeUndefined();
    expect(lp.choices[0]!.token_ids).toBeUndefined();
    for (const c of lp.choices[0]!.logprobs!.content) expect(c.token).toMatch(/^token_id:\d+$/);
    await expect(openai.chat.completions.create({ ...chatBody(req), top_logprobs: 2 })).rejects.toMatchObject({ status: 400 });
    // Deterministic: the same request gets the same ids and logprobs from a fresh stand-in.
    const again = await startTeacherServer({ tasks: world.tasks, seed: 5 });
    try {
      const other = (await client(again.url).chat.completions.create({ ...chatBody(req), logprobs: true, return_tokens_as_token_ids: true } as never)) as unknown as VllmReply;
      expect(other.choices[0]!.logprobs).toEqual(lp.choices[0]!.logprobs);
    } finally {
      await again.close();
    }
  });

  it("a reply without the fields stops a capturing run (the endpoint ignores them every time)", () => {
    const plain = { choices: [{ index: 0, message: { role: "assistant", content: "FINISH([])" }, logprobs: null, finish_reason: "stop" }] };
    let thrown: unknown;
    try {
      readTurnTokens(plain);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ModelError);
    expect((thrown as ModelError).fatal).toMatch(/no prompt_token_ids.*return_token_ids/);
  });

  it("ids that are not integers >= 0 are a malformed reply, a model error of that turn", () => {
    const reply = (prompt: unknown) => ({ prompt_token_ids: prompt, choices: [{ token_ids: [5, 6], logprobs: { content: [{ logprob: -0.1 }, { logprob: -0.2 }] } }] });
    expect(readTurnTokens(reply([1, 2, 3]))).toEqual({ prompt_ids: [1, 2, 3], completion_ids: [5, 6], logprobs: [-0.1, -0.2] });
    for (const bad of [[1, -1], [1.5], ["1"], "1,2", null]) {
      let thrown: unknown;
      try {
        readTurnTokens(reply(bad));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ModelError);
      expect((thrown as ModelError).message).toMatch(/malformed prompt_token_ids: expected an array of token ids/);
      expect((thrown as ModelError).fatal).toBeUndefined();
    }
  });
});

describe.each(["text", "tools"] as const)("ehrgym rollout --capture tokens, %s protocol", (protocol) => {
  it("stores every turn's ids and logprobs, consistent with the tokenizer", async () => {
    const out = join(world.dir, `tokens-${protocol}.jsonl`);
    const r = await cli(["rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", "--protocol", protocol, "--capture", "tokens"]);
    expect(r.status, r.stderr).toBe(0);
    const rows = readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => EpisodeRow.parse(JSON.parse(l)));
    expect(rows).toHaveLength(world.tasks.length);
    let chained = 0;
    for (const row of rows) {
      const turns = row.turns!;
      const tokens = turns.map((t) => t.tokens!);
      expect(tokens.every(Boolean)).toBe(true);
      const prompts = fullPrompts(tokens);
      const assistants = row.messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
      expect(assistants).toHaveLength(turns.length);
      assistants.forEach((at, k) => {
        expect(prompts[k]).toEqual(tokensOf(renderChat(row.messages.slice(0, at), row.tools)));
        expect(tokens[k]!.completion_ids).toEqual([...tokensOf(assistantBody(row.messages[at]!)), imEnd]);
        expect(tokens[k]!.logprobs).toHaveLength(tokens[k]!.completion_ids.length);
        expect(turns[k]!.usage).toMatchObject({ prompt_tokens: prompts[k]!.length, completion_tokens: tokens[k]!.completion_ids.length });
      });
      // Rows store each later prompt after the ids the previous prompt + completion share with it.
      tokens.slice(1).forEach((t) => expect(t.prompt_reused).toBeGreaterThan(0));
      const trajectory = trajectoryTokens(turns);
      if ("reason" in trajectory) continue;
      chained++;
      expect(trajectory.prompt_ids).toEqual(prompts[0]);
      expect(trajectory.completion_ids).toHaveLength(trajectory.env_mask.length);
      expect(trajectory.logprobs).toHaveLength(trajectory.env_mask.length);
      const last = prompts.at(-1)!.concat(tokens.at(-1)!.completion_ids);
      expect(trajectory.prompt_ids.concat(trajectory.completion_ids)).toEqual(last);
      expect(trajectory.env_mask.reduce((a, b) => a + b, 0)).toBe(tokens.reduce((a, t) => a + t.completion_ids.length, 0));
    }
    expect(chained).toBeGreaterThan(0);
  });
});

describe("the ChatML rendering of reasoning", () => {
  it("renders a turn's reasoning as Qwen3's template does, so an inline think block read apart renders back to the sampled text", () => {
    const sampled = "<think>\nThe patient needs a GET first.\n</think>\n\nGET http://localhost:8080/fhir/Patient?identifier=S1";
    const read = splitReasoning(sampled, undefined);
    expect(read.reasoning).toMatch(/^\n.*\n$/s); // the parser keeps what stood between the tags, as vLLM's parsers do
    expect(assistantBody({ content: read.content, reasoning_content: read.reasoning })).toBe(sampled);
    // Qwen3's template: reasoning_content.strip('\n'), then content.lstrip('\n').
    expect(assistantBody({ content: "\n\nFINISH([1])", reasoning_content: "\n\nwhy\n\n" })).toBe("<think>\nwhy\n</think>\n\nFINISH([1])");
    expect(assistantBody({ content: "\nFINISH([1])" })).toBe("\nFINISH([1])");
  });
});
