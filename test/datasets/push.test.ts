// `ehrgym dataset push` against a local Hub-compatible server over loopback HTTP (the real
// @huggingface/hub client in a child process of the CLI).
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDataset } from "../../datasets/index.ts";
import { expertRows, toJsonl } from "./fixture.ts";
import { cliAsync, tree } from "./helpers.ts";
import { HubServer } from "./hub-server.ts";

const TOKEN = "hf_test_token_0123456789";
const dir = mkdtempSync(join(tmpdir(), "ehrgym-dspush-"));
const ds = join(dir, "ds");
const emptyHome = join(dir, "hf-home-empty");
const hub = new HubServer(TOKEN);
let input: string;

const build = (out: string, shardRows: number) =>
  buildDataset({ inputs: [input], out, keep: "correct", dedupe: false, splits: [{ name: "train", fraction: 0.8 }, { name: "test", fraction: 0.2 }], seed: 1, excludeMrnsFrom: [], formats: ["trl", "openai", "arrow"], name: "push-test", license: "mit", shardRows, force: true });

/** The CLI's push with a clean environment: no real token file, no HF_ENDPOINT from outside. */
const push = (args: string[], env: NodeJS.ProcessEnv = { HF_TOKEN: TOKEN }) =>
  cliAsync(["dataset", "push", ...args], { HF_HOME: emptyHome, HF_ENDPOINT: "", HF_TOKEN: "", HF_TOKEN_PATH: "", ...env });

beforeAll(async () => {
  mkdirSync(emptyHome);
  input = join(dir, "rows.jsonl");
  writeFileSync(input, toJsonl(await expertRows({ perType: 1 })));
  await build(ds, 10);
  await hub.start();
});
afterAll(async () => {
  await hub.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  hub.faults = [];
});

function expectRemoteIs(repo: string, local: string): void {
  const files = tree(local);
  const remote = hub.repos.get(repo)!;
  expect([...remote.files.keys()].sort()).toEqual([...files.keys()].sort());
  for (const [path, bytes] of files) expect(remote.files.get(path)!.data.equals(bytes), path).toBe(true);
}

describe("dataset push", () => {
  it("creates the repo, uploads every file in one commit (LFS and regular), verifies, and sends the token", async () => {
    const r = await push([ds, "--repo", "alice/ehr-sft", "--private", "--hub-url", hub.url]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pushed \d+ files to .*\/datasets\/alice\/ehr-sft in commit [0-9a-f]{40}/);
    expect(r.stderr).toContain("created datasets/alice/ehr-sft (private)");
    expect(r.stderr).toContain("verified");
    expect(hub.repos.get("alice/ehr-sft")!.private).toBe(true);
    expect(hub.repos.get("alice/ehr-sft")!.commits).toHaveLength(1);
    expectRemoteIs("alice/ehr-sft", ds);
    const remote = hub.repos.get("alice/ehr-sft")!;
    expect([...remote.files.values()].some((f) => f.lfs)).toBe(true);
    expect([...remote.files.values()].some((f) => !f.lfs)).toBe(true);
    expect(hub.requests.length).toBeGreaterThan(5);
    for (const q of hub.requests.filter((x) => !x.path.startsWith("/lfs-upload/"))) expect(q.auth, `${q.method} ${q.path}`).toBe(`Bearer ${TOKEN}`);
    const routes = new Set(hub.requests.map((q) => `${q.method} ${q.path.replace(/[0-9a-f]{64}/, "<oid>")}`));
    for (const route of [
      "GET /api/datasets/alice/ehr-sft",
      "POST /api/repos/create",
      "POST /api/datasets/alice/ehr-sft/preupload/main",
      "POST /datasets/alice/ehr-sft.git/info/lfs/objects/batch",
      "PUT /lfs-upload/<oid>",
      "POST /api/datasets/alice/ehr-sft/commit/main",
      "GET /api/datasets/alice/ehr-sft/tree/main",
    ])
      expect(routes.has(route), route).toBe(true);
  });

  it("makes no commit when the same content is pushed again (token from the login token file)", async () => {
    const home = join(dir, "hf-home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "token"), `${TOKEN}\n`);
    const before = hub.commitCount();
    const seen = hub.requests.length;
    const r = await push([ds, "--repo", "alice/ehr-sft", "--hub-url", hub.url], { HF_HOME: home });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/is up to date: no commit/);
    expect(hub.commitCount()).toBe(before);
    expect(hub.requests.slice(seen).every((q) => q.auth === `Bearer ${TOKEN}`)).toBe(true);
    expect(hub.requests.slice(seen).some((q) => q.method === "POST")).toBe(false);
  });

  it("takes the endpoint from HF_ENDPOINT and the token from --token-env; replaces stale shards in one commit", async () => {
    const resharded = join(dir, "ds-resharded");
    await build(resharded, 1000);
    const before = hub.commitCount();
    const r = await push([resharded, "--repo", "alice/ehr-sft", "--token-env", "MY_HF"], { MY_HF: TOKEN, HF_ENDPOINT: hub.url });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/removed \d+ stale files/);
    expect(hub.commitCount()).toBe(before + 1);
    expectRemoteIs("alice/ehr-sft", resharded);
  });

  it("--dry-run prints what would be uploaded and contacts nothing", async () => {
    const seen = hub.requests.length;
    const r = await push([ds, "--repo", "bob/x", "--hub-url", hub.url, "--dry-run"], {});
    expect(r.status, r.stderr).toBe(0);
    const files = tree(ds);
    expect(r.stdout).toContain(`would upload ${files.size} files`);
    for (const path of files.keys()) expect(r.stdout).toContain(path);
    expect(hub.requests.length).toBe(seen);
  });

  it("needs a token: none gives one line and exit 2", async () => {
    const r = await push([ds, "--repo", "bob/x", "--hub-url", hub.url], {});
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe("ehrgym: no Hugging Face token: set HF_TOKEN (or name another variable with --token-env), or run `huggingface-cli login`");
  });
});

describe("dataset push: local files checked against manifest.json first", () => {
  it("refuses a hand-edited card or a changed large (LFS) file with one line, before any request", async () => {
    for (const [name, edit] of [
      ["card", (d: string) => appendFileSync(join(d, "README.md"), "\nEdited by hand.\n")],
      ["arrow", (d: string) => {
        const f = join(d, "data", readdirSync(join(d, "data")).find((x) => x.endsWith(".arrow"))!);
        const bytes = readFileSync(f);
        bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 1;
        writeFileSync(f, bytes);
      }],
    ] as const) {
      const copy = join(dir, `edited-${name}`);
      cpSync(ds, copy, { recursive: true });
      edit(copy);
      const before = hub.requests.length;
      for (const args of [[copy, "--repo", "alice/edited", "--hub-url", hub.url], [copy, "--repo", "alice/edited", "--dry-run"]]) {
        const r = await push(args);
        expect(r.status, r.stderr).toBe(1);
        const lines = r.stderr.trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/the files are not the ones manifest\.json lists \((README\.md: \d+ bytes, manifest\.json says \d+|data\/\w+-\d{5}-of-\d{5}-[0-9a-f]{16}\.arrow: sha256 differs from manifest\.json)\); rebuild it with `ehrgym dataset build`, or run `ehrgym dataset validate/);
      }
      expect(hub.requests.length).toBe(before);
      expect(hub.repos.has("alice/edited")).toBe(false);
    }
  });
});

describe("dataset push: failures give one line with cause and fix; nothing local changes", () => {
  const cases: [string, () => void, string[], RegExp][] = [
    ["401", () => {}, ["--repo", "carol/a"], /rejected the token \(401 Unauthorized.*fix: set a valid token/],
    ["403", () => (hub.faults = [{ when: /^POST \/api\/repos\/create$/, status: 403 }]), ["--repo", "carol/b"], /may not write to datasets\/carol\/b \(403 Forbidden.*fix: use a token with write access/],
    ["404", () => (hub.faults = [{ when: /\/tree\//, status: 404 }]), ["--repo", "carol/c"], /datasets\/carol\/c or its revision "main" was not found \(404.*fix: check --repo/],
    ["409", () => (hub.faults = [{ when: /^POST \/api\/datasets\/carol\/d\/commit\//, status: 409 }]), ["--repo", "carol/d"], /conflict for datasets\/carol\/d \(409 Conflict.*fix:/],
    ["timeout", () => (hub.faults = [{ when: /\/preupload\//, hang: true }]), ["--repo", "carol/e", "--timeout", "1"], /no answer from http:\/\/127\.0\.0\.1:\d+ within 1 s \(timeout\); fix: retry/],
  ];
  for (const [name, setup, args, line] of cases) {
    it(name, async () => {
      setup();
      const before = tree(ds);
      const commits = hub.commitCount();
      const r = await push([ds, ...args, "--hub-url", hub.url], { HF_TOKEN: name === "401" ? "hf_wrong" : TOKEN });
      expect(r.status).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines.at(-1)).toMatch(line);
      expect(lines.at(-1)).toMatch(/^ehrgym: /);
      expect(hub.commitCount()).toBe(commits);
      const after = tree(ds);
      expect([...after.keys()]).toEqual([...before.keys()]);
      for (const [p, b] of before) expect(after.get(p)!.equals(b)).toBe(true);
    });
  }

  it("network down", async () => {
    const down = new HubServer(TOKEN);
    const url = await down.start();
    await down.stop();
    const r = await push([ds, "--repo", "carol/f", "--hub-url", url]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatch(new RegExp(`^ehrgym: cannot reach ${url.replace(/\./g, "\\.")} \\(ECONNREFUSED\\); fix: check --hub-url / HF_ENDPOINT`));
  });
});
