// A local Hub-compatible server (node:http) with exactly the endpoints @huggingface/hub calls for a
// dataset push: repo info (repoExists), repo create, preupload, LFS batch + basic upload, commit
// (NDJSON), tree listing; and those Python's huggingface_hub and `datasets` call to download one:
// repo info at a revision (sha, siblings), paths-info, HEAD/GET resolve (regular files served with
// their git sha1 ETag, LFS files redirected to a "CDN" origin with X-Linked-Etag/-Size, as the Hub
// does). Files are kept in memory; errors and hangs can be injected per route.
// Run as a script (`node --import tsx test/datasets/hub-server.ts TOKEN`) it prints {"url"} and serves.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

type HubFile = { data: Buffer; lfs: boolean };

export interface HubRepo {
  private: boolean;
  files: Map<string, HubFile>;
  commits: string[];
  /** The files at each commit (the last is `files`). */
  snapshots: Map<string, Map<string, HubFile>>;
}

export interface Fault {
  /** Which requests: matched against "METHOD /path". */
  when: RegExp;
  status?: number;
  /** Never answer (for timeouts). */
  hang?: boolean;
}

const LFS_OVER = 64 * 1024;
const gitSha1 = (data: Buffer) => createHash("sha1").update(`blob ${data.length}\0`).update(data).digest("hex");
const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
const lfsPointer = (data: Buffer) => Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(data)}\nsize ${data.length}\n`);

/** A tree / paths-info entry, as the Hub lists it. */
const entry = (path: string, f: HubFile) => ({
  type: "file",
  path,
  size: f.data.length,
  oid: gitSha1(f.lfs ? lfsPointer(f.data) : f.data),
  ...(f.lfs ? { lfs: { oid: sha256(f.data), size: f.data.length, pointerSize: lfsPointer(f.data).length } } : {}),
});

export class HubServer {
  readonly repos = new Map<string, HubRepo>();
  readonly lfs = new Map<string, Buffer>();
  readonly requests: { method: string; path: string; auth: string | undefined }[] = [];
  faults: Fault[] = [];
  /** Called with each request and the status it got (the script prints them, one JSON line each). */
  onResponse?: (q: { method: string; path: string; auth: boolean; status: number }) => void;
  private server?: Server;
  private hung: ServerResponse[] = [];
  url = "";

  constructor(readonly token: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  commitCount(): number {
    return [...this.repos.values()].reduce((n, r) => n + r.commits.length, 0);
  }

  private send(res: ServerResponse, status: number, body: unknown, type = "application/json", headers: Record<string, string> = {}): void {
    res.writeHead(status, { "Content-Type": type, ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  }

  /** The files of a repo at a revision ("main" or one of its commits), or undefined. A repo without
   * commits has an empty main (the real Hub's first commit adds a .gitattributes the push tests would see). */
  private at(repo: HubRepo, revision: string): { sha: string; files: Map<string, HubFile> } | undefined {
    if (revision === "main" && !repo.commits.length) return { sha: "0".repeat(40), files: new Map() };
    const sha = revision === "main" ? repo.commits.at(-1) : repo.commits.find((c) => c === revision);
    return sha ? { sha, files: repo.snapshots.get(sha)! } : undefined;
  }

  private info(id: string, repo: HubRepo, at?: { sha: string; files: Map<string, HubFile> }) {
    return {
      id,
      private: repo.private,
      ...(at ? { sha: at.sha, siblings: [...at.files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([rfilename, f]) => ({ rfilename, size: f.data.length, ...(f.lfs ? { lfs: { sha256: sha256(f.data), size: f.data.length, pointerSize: lfsPointer(f.data).length } } : {}) })) } : {}),
    };
  }

  private revisionNotFound(res: ServerResponse, revision: string): void {
    this.send(res, 404, { error: `Invalid rev id: ${revision}` }, "application/json", { "X-Error-Code": "RevisionNotFound" });
  }

  private async body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? "/", this.url);
    const path = decodeURIComponent(u.pathname);
    const method = req.method ?? "GET";
    this.requests.push({ method, path, auth: req.headers.authorization });
    res.on("finish", () => this.onResponse?.({ method, path, auth: req.headers.authorization !== undefined, status: res.statusCode }));
    const fault = this.faults.find((f) => f.when.test(`${method} ${path}`));
    if (fault?.hang) {
      this.hung.push(res);
      return;
    }
    let m: RegExpExecArray | null;
    if (fault?.status) return this.send(res, fault.status, { error: `injected ${fault.status}` });
    // upload and download hrefs stand for presigned storage URLs: the client sends no token there
    if ((m = /^\/lfs-files\/([0-9a-f]{64})$/.exec(path)) && (method === "GET" || method === "HEAD")) {
      const data = this.lfs.get(m[1]!);
      if (!data) return this.send(res, 404, { error: "no such object" });
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": data.length, ETag: `"${m[1]}"` });
      res.end(method === "HEAD" ? undefined : data);
      return;
    }
    if (!path.startsWith("/lfs-upload/") && req.headers.authorization !== `Bearer ${this.token}`) return this.send(res, 401, { error: "Invalid credentials in Authorization header" });

    if (method === "POST" && path === "/api/repos/create") {
      const b = JSON.parse((await this.body(req)).toString()) as { name: string; organization?: string; type: string; visibility?: string };
      const id = `${b.organization}/${b.name}`;
      if (b.type !== "dataset") return this.send(res, 400, { error: "this test server only knows datasets" });
      if (this.repos.has(id)) return this.send(res, 409, { error: "You already created this dataset repo" });
      this.repos.set(id, { private: b.visibility === "private", files: new Map(), commits: [], snapshots: new Map() });
      return this.send(res, 200, { url: `${this.url}/datasets/${id}`, id });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)$/.exec(path)) && method === "GET") {
      const repo = this.repos.get(m[1]!);
      return repo ? this.send(res, 200, this.info(m[1]!, repo, this.at(repo, "main"))) : this.send(res, 404, { error: "Repository not found" });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/revision\/(.+)$/.exec(path)) && method === "GET") {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" });
      const at = this.at(repo, m[2]!);
      return at ? this.send(res, 200, this.info(m[1]!, repo, at)) : this.revisionNotFound(res, m[2]!);
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/paths-info\/([^/]+)$/.exec(path)) && method === "POST") {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" });
      const at = this.at(repo, m[2]!);
      if (!at) return this.revisionNotFound(res, m[2]!);
      const raw = (await this.body(req)).toString();
      const paths = (req.headers["content-type"] ?? "").includes("json") ? (JSON.parse(raw) as { paths: string[] }).paths : new URLSearchParams(raw).getAll("paths");
      const found = paths.flatMap((p) => {
        const f = at.files.get(p);
        if (f) return [entry(p, f)];
        return [...at.files.keys()].some((k) => k.startsWith(`${p}/`)) ? [{ type: "directory", path: p, size: 0, oid: "0".repeat(40) }] : [];
      });
      return this.send(res, 200, found);
    }
    if ((m = /^\/datasets\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path)) && (method === "GET" || method === "HEAD")) {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" }, "application/json", { "X-Error-Code": "RepoNotFound" });
      const at = this.at(repo, m[2]!);
      if (!at) return this.revisionNotFound(res, m[2]!);
      const f = at.files.get(m[3]!);
      if (!f) return this.send(res, 404, { error: "Entry not found" }, "application/json", { "X-Error-Code": "EntryNotFound", "X-Repo-Commit": at.sha });
      if (f.lfs) {
        // the Hub sends LFS files to its CDN: another origin, so the client keeps the metadata of this
        // reply and fetches the bytes there without the token
        const oid = sha256(f.data);
        const cdn = this.url.replace("127.0.0.1", "localhost");
        res.writeHead(302, { Location: `${cdn}/lfs-files/${oid}`, "X-Repo-Commit": at.sha, "X-Linked-Etag": `"${oid}"`, "X-Linked-Size": f.data.length, ETag: `"${entry(m[3]!, f).oid}"` });
        res.end();
        return;
      }
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": f.data.length, ETag: `"${gitSha1(f.data)}"`, "X-Repo-Commit": at.sha });
      res.end(method === "HEAD" ? undefined : f.data);
      return;
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/preupload\/([^/]+)$/.exec(path)) && method === "POST") {
      if (!this.repos.has(m[1]!)) return this.send(res, 404, { error: "Repository not found" });
      const b = JSON.parse((await this.body(req)).toString()) as { files: { path: string; size: number }[] };
      return this.send(res, 200, { files: b.files.map((f) => ({ path: f.path, uploadMode: f.path.endsWith(".arrow") || f.size > LFS_OVER ? "lfs" : "regular", shouldIgnore: false })) });
    }
    if ((m = /^\/datasets\/([^/]+\/[^/]+)\.git\/info\/lfs\/objects\/batch$/.exec(path)) && method === "POST") {
      if (!this.repos.has(m[1]!)) return this.send(res, 404, { message: "Repository not found" });
      const b = JSON.parse((await this.body(req)).toString()) as { transfers: string[]; objects: { oid: string; size: number }[] };
      if (!b.transfers.includes("basic")) return this.send(res, 422, { message: "basic transfer needed" });
      return this.send(
        res,
        200,
        {
          transfer: "basic",
          objects: b.objects.map((o) => ({ oid: o.oid, size: o.size, ...(this.lfs.has(o.oid) ? {} : { actions: { upload: { href: `${this.url}/lfs-upload/${o.oid}` } } }) })),
        },
        "application/vnd.git-lfs+json",
      );
    }
    if ((m = /^\/lfs-upload\/([0-9a-f]{64})$/.exec(path)) && method === "PUT") {
      const data = await this.body(req);
      if (sha256(data) !== m[1]) return this.send(res, 400, { error: "sha256 mismatch" });
      this.lfs.set(m[1]!, data);
      res.writeHead(200).end();
      return;
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/commit\/([^/]+)$/.exec(path)) && method === "POST") {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" });
      const ops = (await this.body(req))
        .toString()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { key: string; value: Record<string, string | number> });
      const next = new Map(repo.files);
      for (const op of ops) {
        if (op.key === "file") next.set(String(op.value.path), { data: Buffer.from(String(op.value.content), "base64"), lfs: false });
        else if (op.key === "lfsFile") {
          const data = this.lfs.get(String(op.value.oid));
          if (!data || data.length !== op.value.size) return this.send(res, 422, { error: `LFS object ${op.value.oid} was not uploaded` });
          next.set(String(op.value.path), { data, lfs: true });
        } else if (op.key === "deletedFile") next.delete(String(op.value.path));
        else if (op.key !== "header") return this.send(res, 400, { error: `unknown operation ${op.key}` });
      }
      repo.files = next;
      const oid = createHash("sha1").update(`${m[1]}:${repo.commits.length}`).digest("hex");
      repo.commits.push(oid);
      repo.snapshots.set(oid, next);
      return this.send(res, 200, { commitOid: oid, commitUrl: `${this.url}/datasets/${m[1]}/commit/${oid}` });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/tree\/([^/]+)(?:\/(.*))?$/.exec(path)) && method === "GET") {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" });
      const at = this.at(repo, m[2]!);
      if (!at) return this.revisionNotFound(res, m[2]!);
      const under = m[3] ? `${m[3].replace(/\/+$/, "")}/` : "";
      const recursive = u.searchParams.get("recursive") === "true";
      const dirs = new Set<string>();
      const files: ReturnType<typeof entry>[] = [];
      for (const [p, f] of [...at.files.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (!p.startsWith(under)) continue;
        const rest = p.slice(under.length).split("/");
        for (let i = 1; i < rest.length && (recursive || i === 1); i++) dirs.add(under + rest.slice(0, i).join("/"));
        if (recursive || rest.length === 1) files.push(entry(p, f));
      }
      if (under && !dirs.size && !files.length) return this.send(res, 404, { error: `Entry not found: ${m[3]}` }, "application/json", { "X-Error-Code": "EntryNotFound" });
      return this.send(res, 200, [...[...dirs].sort().map((d) => ({ type: "directory", path: d, size: 0, oid: "0".repeat(40) })), ...files]);
    }
    this.send(res, 404, { error: `no route ${method} ${path}` });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const hub = new HubServer(process.argv[2] ?? "hf_test_token");
  hub.onResponse = (q) => console.log(JSON.stringify(q));
  console.log(JSON.stringify({ url: await hub.start() }));
  const stop = () => void hub.stop().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
