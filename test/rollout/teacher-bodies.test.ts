// The stand-in reads an episode's growing conversation incrementally (rollout/teacher/bodies.ts): what it
// reads must be what a full read gives, and the replies over HTTP must not depend on it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvConfig } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { LONG_MESSAGE, startTeacherServer, type TeacherServer } from "../../rollout/index.ts";
import { BodyReader, episodeOf } from "../../rollout/teacher/bodies.ts";
import { arraySpan } from "../../rollout/teacher/json-span.ts";
import { longContent } from "../../rollout/teacher/long-content.ts";
import { ApiError } from "../../rollout/teacher/request.ts";
import { client, environment, MODEL, world } from "./teacher-world.ts";

const bytes = (s: string) => Buffer.from(s, "utf8");
const full = (raw: Buffer) => new BodyReader().read(raw);

describe("arraySpan", () => {
  it("finds the array under a top-level key whatever surrounds it", () => {
    for (const text of [
      '{"model":"m","messages":[{"a":"]"}],"tools":[1]}',
      ' { "messages" : [ {"a":"\\"]\\\\"} , [1,{"b":[]}] ] , "x" : {"messages":[]} } ',
      '{"model":"[\\"messages\\":[","n":-1.5e3,"t":true,"messages":[null]}',
    ]) {
      const b = bytes(text);
      const span = arraySpan(b, "messages")!;
      expect(b[span.open]).toBe(0x5b);
      expect(JSON.parse(b.subarray(span.open, span.close + 1).toString())).toEqual(JSON.parse(text).messages);
    }
  });

  it("declines bodies it cannot place for sure", () => {
    expect(arraySpan(bytes('{"messages":[1],"messages":[2]}'), "messages")).toBeUndefined();
    expect(arraySpan(bytes('{"messag\\u0065s":[1]}'), "messages")).toBeUndefined();
    expect(arraySpan(bytes('{"messages":"[1]"}'), "messages")).toBeUndefined();
    expect(arraySpan(bytes("[1]"), "messages")).toBeUndefined();
  });
});

describe("BodyReader", () => {
  const turn = (n: number) => [
    { role: "assistant", content: `GET http://x/fhir/Observation?n=${n}` },
    { role: "user", content: `Here is the response:\n{"resourceType": "Bundle", "id": "${n}", "text": "é ✓ 𝄞 \\" ]"}` },
  ];
  const body = (turns: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ model: "m", temperature: 0, messages: [{ role: "user", content: "Question: q" }, ...Array.from({ length: turns }, (_, i) => turn(i)).flat()], ...extra });

  it("reads a continued conversation as a full read does, reusing what it read before", () => {
    const reader = new BodyReader();
    const tools = { tools: [{ type: "function", function: { name: "finish" } }] };
    let before;
    for (let n = 0; n < 4; n++) {
      const raw = bytes(body(n, tools));
      const read = reader.read(raw, "suite/task/0/" + n);
      expect(read).toEqual({ ...full(raw), episode: "suite/task/0" });
      // Messages read before are the same objects: the new request parsed only its new messages.
      if (before) for (let i = 0; i < before.messages.length; i++) expect(read.messages[i]).toBe(before.messages[i]);
      before = read;
    }
    // A re-sent request reads the same.
    const raw = bytes(body(3, tools));
    expect(reader.read(raw, "suite/task/0/3")).toEqual({ ...full(raw), episode: "suite/task/0" });
  });

  it("keeps long added contents in parts, read as a full read reads them", () => {
    // A FHIR reply of ~240 KB: its message's content is kept as parts, and its digest is the full read's.
    const entries = Array.from({ length: 4000 }, (_, i) => `{"resource": {"id": "${i}", "note": "é ✓ 𝄞 \\" ]"}}`);
    const long = `Here is the response from the GET request:\n{"resourceType": "Bundle", "entry": [${entries.join(",\n  ")}]}`;
    const conversation = (replies: number) => [
      { role: "user", content: "Question: q" },
      ...Array.from({ length: replies }, (_, n) => [
        { role: "assistant", content: `GET http://x/fhir/Observation?n=${n}` },
        { role: "user", content: n === 1 ? long : `reply ${n}` },
      ]).flat(),
    ];
    const reader = new BodyReader();
    for (let n = 0; n < 4; n++) {
      const raw = bytes(JSON.stringify({ model: "m", messages: conversation(n) }));
      const read = reader.read(raw, "suite/task/0/" + n);
      expect(read).toEqual({ ...full(raw), episode: "suite/task/0" });
      if (n >= 2) {
        const m = read.messages[4]!;
        expect(longContent(m)?.parts.length).toBeGreaterThan(4);
        expect(longContent(m)?.text()).toBe(long);
        expect(m.content).toBe(long);
        expect(read.request.messages[4]!.content).toBe(long);
      }
    }
    expect(Buffer.byteLength(long)).toBeGreaterThan(LONG_MESSAGE * 3);
  });

  it("reads in full whatever does not continue the kept body, with a full read's errors", () => {
    const reader = new BodyReader();
    reader.read(bytes(body(1)), "e/1");
    // Another model, an edited earlier message, other top-level fields: read in full.
    for (const raw of [bytes(body(2).replace('"model":"m"', '"model":"n"')), bytes(body(2).replace("n=0", "n=9")), bytes(body(2, { n: 1 }))]) {
      expect(reader.read(raw, "e/2")).toEqual({ ...full(raw), episode: "e" });
      reader.read(bytes(body(1)), "e/1");
    }
    // An added message that fails validation fails as a full read does.
    const bad = bytes(body(1).replace(/\]\}$/, ',{"role":"robot","content":"x"}]}'));
    const error = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof ApiError ? [e.status, e.message, e.param] : e;
      }
      return "no error";
    };
    expect(error(() => reader.read(bad, "e/2"))).toEqual(error(() => full(bad)));
    expect(error(() => reader.read(bytes(body(1).slice(0, -1)), "e/2"))).toEqual(error(() => full(bytes(body(1).slice(0, -1)))));
  });

  it("takes the episode from keys shaped <episode>/<turn>", () => {
    expect(episodeOf("mab-v1/mab-v1/task1/1-3/2/4")).toBe("mab-v1/mab-v1/task1/1-3/2");
    expect(episodeOf("episode-1-turn-0")).toBeUndefined();
    expect(episodeOf("/0")).toBeUndefined();
    expect(episodeOf(undefined)).toBeUndefined();
  });
});

describe("teacher serve: incremental reads change no reply", () => {
  let config: EnvConfig;
  let tasks: Task[];
  const servers: TeacherServer[] = [];
  beforeAll(() => {
    ({ config, tasks } = world({ patients: 8, seed: 21, perType: 2 }));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("answers the same requests alike with and without Idempotency-Keys (both protocols, usage included)", async () => {
    const keyed = await startTeacherServer({ tasks, seed: 5, errorRate: 0.5 });
    const plain = await startTeacherServer({ tasks, seed: 5, errorRate: 0.5 });
    servers.push(keyed, plain);
    const sent: { body: string; reply: unknown }[] = [];
    let episode = "";
    // Episodes played against `keyed` with the runner's keys; every request and reply recorded.
    const recording: typeof fetch = async (url, init) => {
      const body = String(init!.body);
      const turn = (JSON.parse(body) as { messages: { role: string }[] }).messages.filter((m) => m.role === "assistant").length;
      const headers = new Headers(init!.headers);
      headers.set("Idempotency-Key", `${episode}/${turn}`);
      const res = await fetch(url, { ...init, headers });
      const text = await res.text();
      sent.push({ body, reply: JSON.parse(text) });
      return new Response(text, { status: res.status, headers: res.headers });
    };
    const c = client(keyed.url, { fetch: recording });
    for (const protocol of ["text", "tools"] as const) {
      const env = environment(config, protocol);
      for (const task of tasks.filter((_, i) => i % 2 === 0)) {
        for (let sample = 0; sample < 2; sample++) {
          episode = `${task.suite}/${task.id}/${protocol}/${sample}`;
          await env.rollout(c, MODEL, task);
        }
      }
    }
    expect(sent.length).toBeGreaterThan(tasks.length);
    expect(sent.some((s) => s.body.length > 20_000)).toBe(true);
    // Some replies are long enough to be kept in parts (bodies.ts), whose digests and token counts must not change a reply.
    expect(sent.some((s) => (JSON.parse(s.body) as { messages: { content: string | null }[] }).messages.some((m) => (m.content?.length ?? 0) > LONG_MESSAGE))).toBe(true);
    const strip = (r: unknown) => ({ ...(r as object), created: 0 });
    for (const { body, reply } of sent) {
      const res = await fetch(`${plain.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(strip(await res.json())).toEqual(strip(reply));
    }
  });
});
