// `dataset push`: the folder to a Hugging Face dataset repo with @huggingface/hub. The remote file
// list is compared with the manifest first (no commit when it already matches), then one commit
// with every file (and the removal of stale shards), then the list is read back and compared again.
// The local folder is only read.
import { createHash } from "node:crypto";
import { existsSync, openAsBlob, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { commit, createRepo, HubApiError, listFiles, repoExists, type CommitOperation, type ListFileEntry } from "@huggingface/hub";
import { DatasetError, fileDigest, fileProblems, MANIFEST, readManifest, type ManifestFile } from "./manifest.ts";

export interface PushOptions {
  dir: string;
  repo: string;
  private: boolean;
  revision: string;
  message?: string;
  hubUrl?: string;
  token: string;
  /** Per request, ms. */
  timeoutMs: number;
  log?: (line: string) => void;
}

/** A push that failed: one line with the cause and the fix. */
export class PushError extends Error {
  override name = "PushError";
}

/** The token: the variable named by --token-env, else the file `huggingface-cli login` writes. */
export function findToken(env: NodeJS.ProcessEnv, tokenEnv = "HF_TOKEN"): { token: string; from: string } | undefined {
  const fromEnv = env[tokenEnv]?.trim();
  if (fromEnv) return { token: fromEnv, from: `$${tokenEnv}` };
  const file = env.HF_TOKEN_PATH || join(env.HF_HOME || join(homedir(), ".cache", "huggingface"), "token");
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (token) return { token, from: file };
  }
  return undefined;
}

type Remote = Map<string, ListFileEntry>;

async function remoteFiles(p: PushOptions, fetchFn: typeof fetch): Promise<Remote> {
  const out: Remote = new Map();
  for await (const f of listFiles({ repo: { type: "dataset", name: p.repo }, recursive: true, revision: p.revision, accessToken: p.token, fetch: fetchFn, ...(p.hubUrl ? { hubUrl: p.hubUrl } : {}) }))
    if (f.type === "file") out.set(f.path, f);
  return out;
}

/** Whether the remote file is the local one: same size, and the same hash where the Hub gives one we can compute. */
async function sameFile(dir: string, local: ManifestFile, remote: ListFileEntry | undefined): Promise<boolean> {
  if (!remote || remote.size !== local.bytes) return false;
  if (remote.lfs) return remote.lfs.oid === local.sha256;
  // The git blob id the Hub reports as `oid` for a file stored in git (not LFS).
  if (remote.oid) return remote.oid === (await fileDigest(join(dir, local.path), "sha1", `blob ${local.bytes}\0`));
  return true;
}

const OURS = /^(data|openai)\//;

async function differences(p: PushOptions, files: ManifestFile[], remote: Remote): Promise<{ changed: ManifestFile[]; stale: string[] }> {
  const changed: ManifestFile[] = [];
  for (const f of files) if (!(await sameFile(p.dir, f, remote.get(f.path)))) changed.push(f);
  const local = new Set(files.map((f) => f.path));
  const stale = [...remote.keys()].filter((path) => OURS.test(path) && !local.has(path)).sort();
  return { changed, stale };
}

/** What a push would upload, manifest.json last (it describes the others). Refuses a folder whose files are
 *  not the ones its manifest lists (e.g. a card edited after the build), before anything reaches the network. */
export async function dryRun(dir: string): Promise<ManifestFile[]> {
  const m = readManifest(dir);
  const bytes = readFileSync(join(dir, MANIFEST));
  const files = [...m.files, { path: MANIFEST, rows: 0, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }];
  const changed = await fileProblems(dir, m.files);
  if (changed.length)
    throw new DatasetError(`${dir}: the files are not the ones manifest.json lists (${changed.slice(0, 2).join("; ")}${changed.length > 2 ? `; ${changed.length - 2} more` : ""}); rebuild it with \`ehrgym dataset build\`, or run \`ehrgym dataset validate ${dir}\` to see every difference`);
  return files;
}

export function describeError(err: unknown, p: Pick<PushOptions, "repo" | "revision" | "hubUrl" | "timeoutMs">): string {
  const where = p.hubUrl ?? "https://huggingface.co";
  if (err instanceof PushError) return err.message;
  if (err instanceof HubApiError) {
    const detail = err.message.replace(/\. URL: .*$/, "");
    switch (err.statusCode) {
      case 401:
        return `the Hub rejected the token (401 Unauthorized: ${detail}); fix: set a valid token in HF_TOKEN (or --token-env NAME), or run \`huggingface-cli login\``;
      case 403:
        return `the token may not write to datasets/${p.repo} (403 Forbidden: ${detail}); fix: use a token with write access to that namespace (a fine-grained token needs "write" on it)`;
      case 404:
        return `datasets/${p.repo} or its revision "${p.revision}" was not found (404: ${detail}); fix: check --repo (owner/name) and --revision (the branch must exist), and that the token's account can see the repo`;
      case 409:
        return `the Hub reported a conflict for datasets/${p.repo} (409 Conflict: ${detail}); fix: the name may be taken by another repo type, or the branch moved during the push: check the name, then push again`;
      default:
        return `the Hub answered ${err.statusCode} for datasets/${p.repo} (${detail}); fix: retry later, or check the Hub's status`;
    }
  }
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return `no answer from ${where} within ${p.timeoutMs / 1000} s (timeout); fix: retry, check the network, or raise --timeout`;
  if (e?.message === "fetch failed" || e?.cause?.code)
    return `cannot reach ${where} (${e.cause?.code ?? e.cause?.message ?? "network error"}); fix: check --hub-url / HF_ENDPOINT and the network connection`;
  return `push failed: ${e?.message ?? String(err)}`;
}

/** Pushes the folder; `commit` is absent when the remote already matched (no commit made). */
export async function pushDataset(p: PushOptions) {
  const log = p.log ?? (() => {});
  const files = await dryRun(p.dir);
  const fetchFn: typeof fetch = (input, init) => {
    const timeout = AbortSignal.timeout(p.timeoutMs);
    return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  };
  const hub = { ...(p.hubUrl ? { hubUrl: p.hubUrl } : {}), accessToken: p.token, fetch: fetchFn };
  const repo = { type: "dataset" as const, name: p.repo };
  const url = `${p.hubUrl ?? "https://huggingface.co"}/datasets/${p.repo}`;
  try {
    let created = false;
    if (!(await repoExists({ repo, ...hub }))) {
      await createRepo({ repo, ...(p.private ? { private: true } : {}), ...hub });
      created = true;
      log(`created datasets/${p.repo}${p.private ? " (private)" : ""}`);
    }
    const before = await differences(p, files, await remoteFiles(p, fetchFn));
    if (!before.changed.length && !before.stale.length) {
      log(`datasets/${p.repo}@${p.revision} already holds these ${files.length} files: no commit`);
      return { url, created, uploaded: 0, deleted: 0 };
    }
    const operations: CommitOperation[] = [
      ...(await Promise.all(files.map(async (f) => ({ operation: "addOrUpdate" as const, path: f.path, content: await openAsBlob(join(p.dir, f.path)) })))),
      ...before.stale.map((path) => ({ operation: "delete" as const, path })),
    ];
    const m = readManifest(p.dir);
    const out = await commit({
      repo,
      ...hub,
      branch: p.revision,
      title: p.message ?? `Upload ${m.name}: ${m.splits.map((s) => `${s.name} ${s.rows}`).join(", ")} rows (ehrgym ${m.ehrgym_version})`,
      operations,
    });
    const after = await differences(p, files, await remoteFiles(p, fetchFn));
    if (after.changed.length || after.stale.length)
      throw new PushError(
        `the remote does not match manifest.json after the commit (${[...after.changed.map((f) => f.path), ...after.stale].slice(0, 3).join(", ")}); fix: push again, and report it if it persists`,
      );
    log(`verified ${files.length} files on datasets/${p.repo}@${p.revision} against manifest.json (sizes and hashes)`);
    return { url, created, ...(out?.commit.oid ? { commit: out.commit.oid } : {}), uploaded: files.length, deleted: before.stale.length };
  } catch (err) {
    throw new PushError(describeError(err, p));
  }
}
export type PushResult = Awaited<ReturnType<typeof pushDataset>>;
