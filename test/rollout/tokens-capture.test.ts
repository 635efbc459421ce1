// `--capture tokens`: vLLM's token request fields sent through the real openai client (extra body
// fields) to the stand-in, which answers them with vLLM's names and shapes; rows keep each turn's ids
// and logprobs, consistent with the tokenizer (o200k_base) on the chat as rollout/chatml.ts renders it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "gpt-tokenizer";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EpisodeTokens, parseReplyBody } from "../../rollout/model/tokens.ts";
import { assistantBody, IM_END, IM_START, renderChat } from "../../rollout/chatml.ts";
import { createModelPolicy, EpisodeRow, runEpisodes } from "../../rollout/index.ts";
import { fullPrompts, trajectoryTokens } from "../../rollout/tokens.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, EHR_FLAGS, smallWorld } from "./rollout-fixture.ts";
import { chatBody, client, firstRequest } from "./teacher-world.ts";
import { envConfig } from "./world.ts";
import { historyMessage, MedAgentEnv, ModelError } from "../../env/core/index.ts";
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
    expect(new EpisodeTokens().read(reply)).toEqual({ prompt_ids: reply.prompt_token_ids, completion_ids: choice.token_ids, logprobs: choice.logprobs!.content.map((c) => c.logprob) });
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
      new EpisodeTokens().read(plain);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ModelError);
    expect((thrown as ModelError).fatal).toMatch(/no prompt_token_ids.*return_token_ids/);
  });

  it("ids that are not integers >= 0 are a malformed reply, a model error of that turn", () => {
    const reply = (prompt: unknown) => ({ prompt_token_ids: prompt, choices: [{ token_ids: [5, 6], logprobs: { content: [{ logprob: -0.1 }, { logprob: -0.2 }] } }] });
    expect(new EpisodeTokens().read(reply([1, 2, 3]))).toEqual({ prompt_ids: [1, 2, 3], completion_ids: [5, 6], logprobs: [-0.1, -0.2] });
    for (const bad of [[1, -1], [1.5], ["1"], "1,2", null]) {
      let thrown: unknown;
      try {
        new EpisodeTokens().read(reply(bad));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ModelError);
      expect((thrown as ModelError).message).toMatch(/malformed prompt_token_ids: expected an array of token ids/);
      expect((thrown as ModelError).fatal).toBeUndefined();
    }
  });
});

// Reading an episode's replies in order stores each prompt after the ids the previous prompt + completion
// share with it, whatever the server's JSON looks like: the same as comparing the whole arrays.
describe("an episode's replies read with the prompt's ids set aside", () => {
  let seed = 7;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const int = (n: number) => Math.floor(random() * n);
  // Small and large ids, so that one id's text is often the start of another's ("1" and "12").
  const ids = (n: number) => Array.from({ length: n }, () => (random() < 0.3 ? int(20) : int(200_000)));
  const body = (prompt: number[], completion: number[], sep: string, nested: boolean, promptFirst: boolean) => {
    const list = (a: number[]) => `[${a.join(sep)}]`;
    const choice = `{"index":0,"message":{"role":"assistant","content":"x \\"prompt_token_ids\\": [1]"},${nested ? `"prompt_token_ids":${list([9, 9])},` : ""}"token_ids":${list(completion)},"logprobs":{"content":[${completion.map(() => '{"logprob":-0.5}').join(",")}]}}`;
    const top = `"prompt_token_ids":${sep === "," ? "" : " "}${list(prompt)}`;
    return promptFirst ? `{"id":"c",${top},"choices":[${choice}]}` : `{"id":"c","choices":[${choice}],${top}}`;
  };
  const oracle = (prompt: number[], before: number[] | undefined) => {
    let n = 0;
    while (before && n < Math.min(prompt.length, before.length) && prompt[n] === before[n]) n++;
    return n;
  };

  it("gives what comparing the whole arrays gives, on 300 generated episodes", () => {
    for (let e = 0; e < 300; e++) {
      const episode = new EpisodeTokens();
      const sep = random() < 0.5 ? "," : ", ";
      let prompt = ids(1 + int(40));
      let before: number[] | undefined;
      for (let turn = 0; turn < 6; turn++) {
        const completion = ids(1 + int(8));
        const { data, promptText } = parseReplyBody(body(prompt, completion, random() < 0.9 ? sep : ", ", random() < 0.15, random() < 0.5), true);
        expect(data).toMatchObject({ choices: [{ token_ids: completion }] });
        const reused = oracle(prompt, before);
        const tokens = episode.read(data, promptText);
        expect(tokens).toEqual({ ...(reused ? { prompt_reused: reused } : {}), prompt_ids: prompt.slice(reused), completion_ids: completion, logprobs: completion.map(() => -0.5) });
        before = prompt.concat(completion);
        // The next prompt: mostly this one, its completion and the environment's reply; sometimes a template
        // that re-renders the end (drops reasoning), repeats part of the completion, grows one id ("1" -> "12"),
        // or starts over.
        const r = random();
        if (r < 0.6) prompt = before.concat(ids(int(30)));
        else if (r < 0.7) prompt = prompt.slice(0, int(prompt.length + 1)).concat(ids(int(20)));
        else if (r < 0.8) prompt = prompt.concat(completion.slice(0, int(completion.length)), ids(1 + int(5)));
        else if (r < 0.9) prompt = [...prompt.slice(0, -1), Number(`${prompt.at(-1)}${1 + int(9)}`), ...completion, ...ids(int(5))];
        else prompt = ids(1 + int(40));
      }
    }
  });

  it("does not parse the previous prompt's ids again", () => {
    const episode = new EpisodeTokens();
    const reply = (prompt: number[]) => `{"prompt_token_ids":[${prompt.join(",")}],"choices":[{"token_ids":[5,6],"logprobs":{"content":[{"logprob":-1},{"logprob":-2}]}}]}`;
    const first = Array.from({ length: 5000 }, (_, i) => 1000 + i);
    const one = parseReplyBody(reply(first), true);
    episode.read(one.data, one.promptText);
    const parse = vi.spyOn(JSON, "parse");
    try {
      const two = parseReplyBody(reply([...first, 5, 6, 7, 8]), true);
      expect(episode.read(two.data, two.promptText)).toEqual({ prompt_reused: 5002, prompt_ids: [7, 8], completion_ids: [5, 6], logprobs: [-1, -2] });
      const parsedChars = parse.mock.calls.reduce((n, [text]) => n + String(text).length, 0);
      expect(parsedChars).toBeLessThan(200);
    } finally {
      parse.mockRestore();
    }
  });

  it("refuses ids that are not integers >= 0 in the part after the previous prompt, and parses other bodies whole", () => {
    const episode = new EpisodeTokens();
    const first = parseReplyBody('{"prompt_token_ids":[1,2,3],"choices":[{"token_ids":[4],"logprobs":{"content":[{"logprob":-1}]}}]}', true);
    expect(first.promptText).toBe("1,2,3");
    expect(episode.read(first.data, first.promptText)).toEqual({ prompt_ids: [1, 2, 3], completion_ids: [4], logprobs: [-1] });
    for (const bad of ["-1", "1.5", '"5"', "null", ""]) {
      const reply = parseReplyBody(`{"prompt_token_ids":[1,2,3,4,${bad}],"choices":[{"token_ids":[4],"logprobs":{"content":[{"logprob":-1}]}}]}`, true);
      // Read whole (a first turn) and after the previous prompt's text (a later turn).
      expect(() => new EpisodeTokens().read(reply.data, reply.promptText), bad).toThrow(/malformed prompt_token_ids: expected an array of token ids/);
      const later = new EpisodeTokens();
      later.read(first.data, first.promptText);
      expect(() => later.read(reply.data, reply.promptText), bad).toThrow(/malformed prompt_token_ids: expected an array of token ids/);
    }
    const trailing = parseReplyBody('{"prompt_token_ids":[1,2,3,],"choices":[{"token_ids":[4],"logprobs":{"content":[{"logprob":-1}]}}]}', true);
    const later = new EpisodeTokens();
    later.read(first.data, first.promptText);
    expect(() => later.read(trailing.data, trailing.promptText)).toThrow(/malformed prompt_token_ids/);
    // Not an array, an empty one, no such key, not JSON: parsed as they are.
    expect(parseReplyBody('{"prompt_token_ids":null,"choices":[]}', true)).toEqual({ data: { prompt_token_ids: null, choices: [] } });
    expect(parseReplyBody('{"prompt_token_ids":[],"choices":[]}', true)).toEqual({ data: { prompt_token_ids: [], choices: [] } });
    expect(parseReplyBody('{"prompt_token_ids":[1,2]}', false)).toEqual({ data: { prompt_token_ids: [1, 2] } });
    expect(parseReplyBody('{"choices":[{"prompt_token_ids":["]"]}],"prompt_token_ids":[7]}', true)).toEqual({ data: { choices: [{ prompt_token_ids: ["]"] }], prompt_token_ids: [7] } });
    expect(() => parseReplyBody('{"prompt_token_ids":[1,2', true)).toThrow(SyntaxError);
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

// A thinking model's earlier turns, as Qwen3's template renders them: their reasoning is shown when the
// client sends it back (--reasoning-history keep) and the turn comes after the last user message. In the
// tools protocol (environment replies are tool messages) every prompt then extends the previous prompt +
// completion, so multi-turn thinking episodes make token trajectories; in the text protocol (environment
// replies are user messages) and without the reasoning sent back, they cannot.
describe("a thinking stand-in renders earlier turns' reasoning as Qwen3's template does", () => {
  let thinking: TeacherServer;
  beforeAll(async () => {
    thinking = await startTeacherServer({ tasks: world.tasks, seed: 5, reasoning: "think" });
  });
  afterAll(async () => {
    await thinking?.close();
  });
  const play = async (protocol: "text" | "tools", reasoningHistory: "drop" | "keep") => {
    const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: thinking.url, apiKey: "x", capture: "tokens", reasoningHistory });
    const { rows } = await runEpisodes({ makeEnv: () => new MedAgentEnv(envConfig(world.store)), policy, tasks: world.tasks, protocol, maxRounds: 8, concurrency: 4, progress: false });
    return rows.filter((r) => r.messages.filter((m) => m.role === "assistant").length >= 2);
  };

  it("tools protocol, reasoning sent back: every multi-turn episode is one token sequence, the chat rendered again", async () => {
    const rows = await play("tools", "keep");
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const trajectory = trajectoryTokens(row.turns!);
      if ("reason" in trajectory) throw new Error(`${row.task_id}: ${trajectory.reason}`);
      const last = row.messages.map((m) => m.role).lastIndexOf("assistant");
      expect(row.messages[last]!.reasoning_content).toBeTruthy();
      const rendered = tokensOf(renderChat(row.messages.slice(0, last), row.tools) + assistantBody(row.messages[last]!) + IM_END);
      expect(trajectory.prompt_ids.concat(trajectory.completion_ids)).toEqual(rendered);
      expect(new Set(trajectory.env_mask)).toEqual(new Set([0, 1]));
    }
  });

  it.each([["text", "keep"], ["tools", "drop"]] as const)("%s protocol, reasoning %s: earlier reasoning is not rendered, so no episode of several turns is one sequence", async (protocol, history) => {
    const rows = await play(protocol, history);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(trajectoryTokens(row.turns!)).toMatchObject({ reason: expect.stringMatching(/does not extend/) });
      // Each prompt is still the chat as sent, rendered by the same rule.
      const prompts = fullPrompts(row.turns!.map((t) => t.tokens!));
      const sent = history === "keep" ? row.messages : row.messages.map((m) => historyMessage(m, "drop"));
      row.messages.forEach((m, at) => {
        if (m.role !== "assistant") return;
        const k = row.messages.slice(0, at).filter((x) => x.role === "assistant").length;
        expect(prompts[k]).toEqual(tokensOf(renderChat(sent.slice(0, at), row.tools)));
      });
    }
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
