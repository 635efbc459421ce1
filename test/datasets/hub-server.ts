// A local Hub-compatible server (node:http) with exactly the endpoints @huggingface/hub calls for a
// dataset push: repo info (repoExists), repo create, preupload, LFS batch + basic upload, commit
// (NDJSON), tree listing. Files are kept in memory; errors and hangs can be injected per route.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HubRepo {
  private: boolean;
  files: Map<string, { data: Buffer; lfs: boolean }>;
  commits: string[];
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

export class HubServer {
  readonly repos = new Map<string, HubRepo>();
  readonly lfs = new Map<string, Buffer>();
  readonly requests: { method: string; path: string; auth: string | undefined }[] = [];
  faults: Fault[] = [];
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

  private send(res: ServerResponse, status: number, body: unknown, type = "application/json"): void {
    res.writeHead(status, { "Content-Type": type });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
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
    const fault = this.faults.find((f) => f.when.test(`${method} ${path}`));
    if (fault?.hang) {
      this.hung.push(res);
      return;
    }
    if (fault?.status) return this.send(res, fault.status, { error: `injected ${fault.status}` });
    // upload hrefs stand for presigned storage URLs: the client sends no token there
    if (!path.startsWith("/lfs-upload/") && req.headers.authorization !== `Bearer ${this.token}`) return this.send(res, 401, { error: "Invalid credentials in Authorization header" });

    let m: RegExpExecArray | null;
    if (method === "POST" && path === "/api/repos/create") {
      const b = JSON.parse((await this.body(req)).toString()) as { name: string; organization?: string; type: string; visibility?: string };
      const id = `${b.organization}/${b.name}`;
      if (b.type !== "dataset") return this.send(res, 400, { error: "this test server only knows datasets" });
      if (this.repos.has(id)) return this.send(res, 409, { error: "You already created this dataset repo" });
      this.repos.set(id, { private: b.visibility === "private", files: new Map(), commits: [] });
      return this.send(res, 200, { url: `${this.url}/datasets/${id}`, id });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)$/.exec(path)) && method === "GET") {
      return this.repos.has(m[1]!) ? this.send(res, 200, { id: m[1], private: this.repos.get(m[1]!)!.private }) : this.send(res, 404, { error: "Repository not found" });
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
      return this.send(res, 200, { commitOid: oid, commitUrl: `${this.url}/datasets/${m[1]}/commit/${oid}` });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/tree\/([^/]+)(?:\/(.*))?$/.exec(path)) && method === "GET") {
      const repo = this.repos.get(m[1]!);
      if (!repo) return this.send(res, 404, { error: "Repository not found" });
      if (m[2] !== "main") return this.send(res, 404, { error: `Revision not found: ${m[2]}` });
      const dirs = new Set<string>();
      const entries = [...repo.files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([p, f]) => {
        if (p.includes("/")) dirs.add(p.slice(0, p.lastIndexOf("/")));
        return { type: "file", path: p, size: f.data.length, oid: f.lfs ? gitSha1(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(f.data)}\nsize ${f.data.length}\n`)) : gitSha1(f.data), ...(f.lfs ? { lfs: { oid: sha256(f.data), size: f.data.length, pointerSize: 134 } } : {}) };
      });
      return this.send(res, 200, [...[...dirs].map((d) => ({ type: "directory", path: d, size: 0, oid: "0".repeat(40) })), ...entries]);
    }
    this.send(res, 404, { error: `no route ${method} ${path}` });
  }
}
