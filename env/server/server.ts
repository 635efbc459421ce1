// createRewardServer: the HTTP reward server over a ServerBackend (one env per episode, shared base store).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerBackend } from "./backend.ts";
import { createHandler, type Route } from "./http.ts";
import { ServerMetrics } from "./metrics.ts";
import { InFlight } from "./inflight.ts";
import { EpisodeRegistry } from "./registry.ts";
import { openEnvRoutes } from "./openenv.ts";
import { buildRoutes } from "./routes.ts";
import { REPLICA_HEADER } from "./schemas.ts";
import { EpisodeService } from "./service.ts";
import { attachOpenEnvSocket } from "./socket.ts";

export interface RewardServerOptions {
  backend: ServerBackend;
  /** Episodes kept at once, running or finished-but-not-deleted (default 4096). */
  maxEpisodes?: number;
  /** Drop episodes untouched this long (default 10 minutes; 0 disables). */
  idleTtlMs?: number;
  /** Keep finished episodes this long after their last request, for GET (default 60 s; 0: until the idle TTL). */
  finishedTtlMs?: number;
  /** Largest accepted request body (default 8 MiB). */
  maxBodyBytes?: number;
  /** Require `Authorization: Bearer <token>` on everything but /healthz. */
  token?: string;
  /** Names this replica: the prefix of the episode ids it makes and the X-Ehrgym-Replica header of every reply (default "r0"). */
  replicaId?: string;
}

export interface RewardServer {
  readonly server: Server;
  readonly metrics: ServerMetrics;
  readonly registry: EpisodeRegistry;
  /** Resolves with the base URL, e.g. http://127.0.0.1:8000 */
  listen(port?: number, host?: string): Promise<string>;
  /** Requests being answered now (HTTP requests and /ws messages). */
  readonly inFlight: InFlight;
  /**
   * Refuses new episodes (503, /healthz too) and waits for the requests in flight, at most
   * `timeoutMs`; true when they all finished. Open episodes between steps are not waited for.
   */
  drain(timeoutMs: number): Promise<boolean>;
  /** Stops at once: every connection and episode closed (a pending drain ends too). Idempotent. */
  close(): Promise<void>;
}

export const DEFAULTS = { maxEpisodes: 4096, idleTtlMs: 600_000, finishedTtlMs: 60_000, maxBodyBytes: 8 * 1024 * 1024, replicaId: "r0" } as const;

export function createRewardServer(options: RewardServerOptions): RewardServer {
  const replicaId = options.replicaId ?? DEFAULTS.replicaId;
  if (!/^[A-Za-z0-9_.]+$/.test(replicaId)) throw new Error(`replicaId: letters, digits, "_" and "." only (got ${JSON.stringify(replicaId)})`);
  let metrics: ServerMetrics | undefined;
  const registry = new EpisodeRegistry({
    maxEpisodes: options.maxEpisodes ?? DEFAULTS.maxEpisodes,
    idleTtlMs: options.idleTtlMs ?? DEFAULTS.idleTtlMs,
    finishedTtlMs: options.finishedTtlMs ?? DEFAULTS.finishedTtlMs,
    replicaId,
    onEvict: () => {
      if (metrics) metrics.episodesEvicted++;
    },
  });
  metrics = new ServerMetrics(() => ({ open: registry.open, retained: registry.retained }));
  const service = new EpisodeService(options.backend, registry, metrics);
  const inFlight = new InFlight();
  const routes: Route[] = buildRoutes(service, { replicaId, startedAt: Date.now(), draining: () => service.draining, inFlight: () => inFlight.size });
  routes.push(...openEnvRoutes(service, () => routes));
  const m = metrics;
  const handler = createHandler({
    routes,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
    token: options.token,
    headers: { [REPLICA_HEADER]: replicaId },
    onRequest: (route, status, seconds) => m.request(route, status, seconds),
  });
  const server = createServer((req, res) => {
    inFlight.begin();
    res.once("close", () => inFlight.end());
    handler(req, res);
  });
  const closeSockets = attachOpenEnvSocket(server, service, { token: options.token, maxBodyBytes: options.maxBodyBytes ?? DEFAULTS.maxBodyBytes, inFlight });
  // Trainers keep connections open between steps that wait on a model call.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;

  let closed = false;
  let closedResolve!: () => void;
  const closing = new Promise<void>((resolve) => (closedResolve = resolve));

  return {
    server,
    inFlight,
    metrics: m,
    registry,
    listen(port = 8000, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          const addr = server.address() as AddressInfo;
          const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
          resolve(`http://${shownHost}:${addr.port}`);
        });
      });
    },
    async drain(timeoutMs) {
      service.draining = true;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      const done = await Promise.race([inFlight.idle().then(() => true as const), timedOut, closing.then(() => inFlight.size === 0)]);
      clearTimeout(timer);
      return done;
    },
    close() {
      if (!closed) {
        closed = true;
        closeSockets();
        registry.closeAll();
        server.close(() => closedResolve());
        server.closeAllConnections();
      }
      return closing;
    },
  };
}
