// The server's encoders splice FHIR replies from parts: JSON from cached escaped entry texts, and
// MessagePack by writing long strings themselves. Their output must be byte-identical to
// JSON.stringify / msgpack-lite of the same reply, whatever the resources contain.
import fc from "fast-check";
import msgpack from "msgpack-lite";
import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, jsonPiecesAroundMessages, jsonPiecesWithMessages, MedAgentEnv, messageJsonPieces, sameMessageJson, utf8Of, type Message } from "../../env/core/index.ts";
import { createStoreBuilder, ESCAPE_SLICE, FhirService } from "../../env/fhir/index.ts";
import { encodeJson, encodeMsgpack } from "../../env/server/codec.ts";
import { API_BASE, lab, patient, solGrader, task } from "../core/fixtures.ts";

const TRICKY = ['O"Brien', "back\\slash", "tab\there", "line\nbreak", "Zoë Ñúñez", "李小龙", "emoji 😀", "sep\u2028\u2029", "ctl\u0001\u001f", "lone \ud800 surrogate", "</script>"];

function trickyStore(names: string[]) {
  const b = createStoreBuilder();
  names.forEach((family, i) => {
    const mrn = `S${2000000 + i}`;
    b.addResource(patient(mrn, family, `Given ${family}`, "1960-01-01"));
    for (let k = 0; k < 4; k++) b.addResource({ ...lab(String(5000 + i * 10 + k), mrn, "K", 3.5 + k / 10, `2023-0${k + 1}-01T08:00:00+00:00`), note: [{ text: `${family} #${k}` }] });
  });
  return b.build();
}

function envFor(names: string[]) {
  const store = trickyStore(names);
  return new MedAgentEnv(new EnvConfig({ backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: API_BASE })), grader: solGrader() }));
}

const codec = msgpack.createCodec({ preset: false });
/** encodeJson's bytes are JSON.stringify's, UTF-8 encoded. */
const sameJson = (value: unknown) => {
  const bytes = encodeJson(value);
  expect(bytes.toString("utf8")).toBe(JSON.stringify(value));
  expect(bytes.equals(Buffer.from(JSON.stringify(value)))).toBe(true);
};
const messageJson = (message: Message) => messageJsonPieces(message).join("");
const same = (value: unknown) => {
  sameJson(value);
  // msgpack-lite writes undefined fields as nil; the server drops them first (as JSON does).
  const plain = JSON.parse(JSON.stringify(value)) as unknown;
  expect(encodeMsgpack(value).equals(msgpack.encode(plain, { codec }))).toBe(true);
};

describe("server JSON encoder", () => {
  it("encodes text-protocol replies (bundles, pages, errors, POSTs) exactly as JSON.stringify", async () => {
    const env = envFor(TRICKY);
    const reset = await env.reset({ task: task("enc", "S2000000", ["S2000000"]), maxRounds: 20 });
    same(reset);
    const turns = [
      `GET ${API_BASE}Patient?family=${encodeURIComponent(TRICKY[0]!)}`,
      `GET ${API_BASE}Observation?patient=S2000005&code=K&_count=2`,
      `GET ${API_BASE}Observation?patient=S2000006&_sort=-date`,
      `GET ${API_BASE}Observation?patient=S2000001&date=notadate`,
      `GET ${API_BASE}Observation?patient=S2000001&_format=xml`,
      `POST ${API_BASE}Observation\n${JSON.stringify(lab("x", "S2000001", "K", 4.1, "2023-11-13T10:15:00+00:00"))}`,
      `GET ${API_BASE}Observation?patient=S2000001&code=K`,
      `GET ${API_BASE}Patient?_count=50`,
    ];
    let spliced = 0;
    for (const turn of turns) {
      const step = await env.step(turn);
      same(step);
      if (step.observation.some((m) => m.content?.includes('"resourceType": "Bundle"'))) spliced++;
    }
    expect(spliced).toBeGreaterThanOrEqual(5);
    // The paging link of a reply is followed as the agent would.
    const page = await env.step(`GET ${API_BASE}Observation?patient=S2000005&code=K&_count=1`);
    const next = /"relation": "next",\s+"url": "([^"]+)"/.exec(page.observation[0]!.content!)![1]!;
    same(page);
    same(await env.step(`GET ${next}`));
    same(await env.step('FINISH(["S2000000"])'));
  });

  it("encodes tool-protocol replies exactly as JSON.stringify", async () => {
    const env = envFor(TRICKY);
    same(await env.reset({ task: task("enc-tools", "S2000000", ["S2000000"]), protocol: "tools" }));
    let n = 0;
    const call = (name: string, args: unknown) => ({ id: `call_${n++}`, type: "function" as const, function: { name, arguments: JSON.stringify(args) } });
    const turn: Message = {
      role: "assistant",
      content: null,
      tool_calls: [call("fhir_patient_search", { family: TRICKY[1] }), call("fhir_observation_search", { patient: "S2000007", code: "K" }), call("fhir_observation_search", { patient: 5 })],
    };
    const step = await env.step(turn);
    expect(step.observation).toHaveLength(3);
    same(step);
  });

  it("falls back to JSON.stringify when a caller replaced a spliced message's content", async () => {
    const env = envFor(TRICKY.slice(0, 2));
    await env.reset({ task: task("enc-edit", "S2000000", ["S2000000"]) });
    const step = await env.step(`GET ${API_BASE}Patient?family=${encodeURIComponent(TRICKY[1]!)}`);
    const message = step.observation[0]!;
    expect(messageJson(message)).toBe(JSON.stringify(message));
    message.content = `${message.content!.slice(0, 40)}edited`;
    expect(messageJson(message)).toBe(JSON.stringify(message));
    same({ ...step, observation: [message, { role: "user", content: undefined }, null, 7] });
    const odd = { a: undefined, observation: [], f: () => 1, b: [undefined] };
    sameJson(odd);
  });

  it("matches JSON.stringify for arbitrary resource text (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: "binary", minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), async (names) => {
        const env = envFor(names);
        await env.reset({ task: task("prop", "S2000000", ["S2000000"]) });
        for (const turn of [`GET ${API_BASE}Patient?_count=10`, `GET ${API_BASE}Observation?patient=S2000000&_count=3`]) same(await env.step(turn));
      }),
      { numRuns: 60, seed: 20261123 },
    );
  });

  it("encodes an episode's history (as rows hold it) exactly as JSON.stringify, its FHIR replies from their cached pieces", async () => {
    const env = envFor([...TRICKY, ...TRICKY.map((n) => `${n} II`), ...TRICKY.map((n) => `${n} III`)]);
    await env.reset({ task: task("enc-history", "S2000000", ["S2000000"]) });
    for (const turn of [`GET ${API_BASE}Patient?_count=50`, `GET ${API_BASE}Observation?patient=S2000006&_sort=-date`, `GET ${API_BASE}Patient?_count=50`, "not an action"]) await env.step(turn);
    const { messages } = env.record();
    const bundles = messages.filter((m) => m.content?.includes('"resourceType": "Bundle"'));
    expect(bundles.length).toBeGreaterThanOrEqual(3);
    // The history's own message objects are noted too: long replies come an entry per piece.
    const long = bundles.filter((m) => m.content!.length > ESCAPE_SLICE);
    expect(long.length).toBeGreaterThanOrEqual(2);
    for (const m of long) expect(messageJsonPieces(m, [], false).length).toBeGreaterThan(20);
    for (const joinPages of [true, false]) {
      const row = { task_id: "enc-history", reward: 1, messages, tools: undefined, policy: { kind: "expert" } };
      expect(jsonPiecesWithMessages(row, "messages", joinPages)!.join("")).toBe(JSON.stringify(row));
    }
  });

  it("writes a row around messages it is given as JSON already, and tells which messages serialize alike", async () => {
    const env = envFor(TRICKY);
    const reset = await env.reset({ task: task("enc-around", "S2000000", ["S2000000"]) });
    const conversation: Message[] = [...reset.observation];
    for (const turn of [`GET ${API_BASE}Patient?_count=50`, `GET ${API_BASE}Observation?patient=S2000006`, "FINISH([1])"]) {
      conversation.push({ role: "assistant", content: turn });
      conversation.push(...(await env.step(turn)).observation);
    }
    const { messages } = env.record();
    expect(messages.length).toBe(conversation.length);
    // The history and the caller's observations are different objects, the FHIR replies noted on both.
    for (let i = 0; i < messages.length; i++) {
      expect(messages[i]).not.toBe(conversation[i]);
      expect(sameMessageJson(messages[i]!, conversation[i]!)).toBe(true);
    }
    const row = { task_id: "enc-around", messages, policy: { kind: "openai" }, n: 2 };
    for (let skip = 0; skip <= messages.length; skip++) {
      const { before, after } = jsonPiecesAroundMessages(row, "messages", skip, false)!;
      const sent = messages.slice(0, skip).map((m) => JSON.stringify(m)).join(",");
      expect(before.join("") + sent + after.join("")).toBe(JSON.stringify(row));
    }
    expect(jsonPiecesAroundMessages(row, "messages", messages.length + 1)).toBeUndefined();
    expect(jsonPiecesAroundMessages({ other: [] }, "messages", 0)).toBeUndefined();
  });

  it("sameMessageJson is JSON.stringify equality", () => {
    const long = "z".repeat(20_000);
    const pairs: [Message, Message, boolean][] = [
      [{ role: "assistant", content: "a" }, { role: "assistant", content: "a" }, true],
      [{ role: "assistant", content: null }, { role: "assistant", content: "" }, false],
      [{ role: "assistant", content: "a" }, { role: "user", content: "a" }, false],
      [{ role: "user", content: long }, { role: "user", content: `${long.slice(0, -1)}y` }, false],
      [{ role: "user", content: long }, { role: "user", content: `${long.slice(0, 10)}${long.slice(10)}` }, true],
      [{ role: "tool", content: "r", tool_call_id: "c1" }, { role: "tool", content: "r", tool_call_id: "c2" }, false],
      [{ role: "assistant", content: "x", tool_calls: [] } as Message, { role: "assistant", content: "x" }, false],
      [{ content: "x", role: "assistant" } as Message, { role: "assistant", content: "x" }, false],
    ];
    for (const [a, b, same] of pairs) {
      expect(JSON.stringify(a) === JSON.stringify(b)).toBe(same);
      expect(sameMessageJson(a, b)).toBe(same);
    }
  });

  it("writes long content that is not a FHIR reply in slices, byte for byte as JSON.stringify", () => {
    // Surrogate pairs straddling every slice boundary, escapes, and a key after `content`.
    const long = `${"a".repeat(8191)}😀${'x"\\\n\u0001'.repeat(3000)}${"é😀".repeat(5000)}`;
    const messages: Message[] = [
      { role: "user", content: long },
      { role: "assistant", content: long, tool_calls: [] } as Message,
      { role: "tool", tool_call_id: "c1", content: long.slice(1) },
    ];
    for (const m of messages) expect(messageJsonPieces(m).join("")).toBe(JSON.stringify(m));
    expect(messageJsonPieces(messages[0]!).length).toBeGreaterThan(3);
    const row = { messages, n: 1 };
    expect(utf8Of(jsonPiecesWithMessages(row, "messages")!).equals(Buffer.from(JSON.stringify(row)))).toBe(true);
  });
});
