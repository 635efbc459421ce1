// The expert is a deterministic plan per task type, replayed from the start on every turn:
// each request the plan makes is matched with the environment's reply to the same-numbered
// earlier request; the first request without a reply is the next thing to send.
import type { FhirResource } from "../../env/fhir/index.ts";
import type { Task } from "../../env/tasks/index.ts";

export type Request =
  | { kind: "GET"; resourceType: string; params: [string, string][]; /** absolute URL (paging) */ url?: string }
  | { kind: "POST"; resourceType: string; body: FhirResource }
  /** A calculator call (tool protocol): one Python expression. */
  | { kind: "CALC"; expression: string }
  | { kind: "FINISH"; answer: unknown[] };

/** The environment's reply to one earlier request: the parsed JSON body, or an error text. */
export type Reply = { ok: true; json: unknown } | { ok: false; error: string };

export class ExpertError extends Error {
  override name = "ExpertError";
}

/** Thrown inside a plan to stop replay at a request that has no reply yet. */
class Pending {
  constructor(readonly requests: Request[]) {}
}

export interface PlanContext {
  readonly task: Task;
  /** Turns left after the requests made so far (for optional extra orders). */
  readonly budget: number;
  /** Whether this protocol can search `resourceType` at all (the tool protocol has no ServiceRequest search). */
  canSearch(resourceType: string): boolean;
  /** Search `resourceType` with `params` (pages through `next` links when the reply is partial). */
  search(resourceType: string, params: [string, string][]): FhirResource[];
  post(resourceType: string, body: FhirResource): void;
  /** `expected`, worked out by the calculator where the protocol offers one (as a model would): the
   *  calculator's answer, which must agree with it. */
  calculate(expression: string, expected: number): number;
  finish(answer: unknown[]): never;
}

export type Plan = (ctx: PlanContext) => void;

/** A number as a Python literal (JS's shortest round-trip text reads back to the same float in Python). */
const literal = (v: number) => String(v);

/** The mean of `values` (undefined when there are none), worked out as a model would with the calculator. */
export function mean(ctx: PlanContext, values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  return ctx.calculate(`sum([${values.map(literal).join(", ")}]) / ${values.length}`, values.reduce((a, b) => a + b, 0) / values.length);
}

export interface ReplayOptions {
  /** Send every POST (and the FINISH) up to the next GET in one turn (tool protocol). */
  batchWrites: boolean;
  maxRounds: number;
  /** Whether paging through `next` links is possible in this protocol. */
  canPage: boolean;
  /** Resource types this protocol can search (all when absent). */
  searchable?: ReadonlySet<string>;
  /** Whether a calculator tool is offered. */
  canCalculate?: boolean;
  /** Filters the protocol's search cannot send, applied to the results (tool protocol). */
  localFilter?: (resourceType: string, params: [string, string][]) => ((r: FhirResource) => boolean) | undefined;
}

class Finished {
  constructor(readonly answer: unknown[]) {}
}

/** The requests to send next (one, or a batch of writes ending with FINISH or before a GET). */
export function nextRequests(plan: Plan, task: Task, replies: Reply[], options: ReplayOptions): Request[] {
  let index = 0;
  const batch: Request[] = [];
  const issue = (request: Request): Reply | undefined => {
    if (index < replies.length) return replies[index++];
    if (request.kind === "GET" || request.kind === "CALC") throw new Pending(batch.length > 0 ? batch : [request]);
    if (!options.batchWrites) throw new Pending([request]);
    batch.push(request);
    index++;
    return undefined;
  };
  const ctx: PlanContext = {
    task,
    get budget() {
      return options.batchWrites ? Number.POSITIVE_INFINITY : options.maxRounds - 1 - index;
    },
    canSearch: (resourceType) => options.searchable?.has(resourceType) ?? true,
    search(resourceType, params) {
      const out: FhirResource[] = [];
      let request: Request = { kind: "GET", resourceType, params };
      for (;;) {
        const reply = issue(request)!;
        if (!reply.ok) throw new ExpertError(`GET ${resourceType} failed: ${reply.error}`);
        const bundle = reply.json as { entry?: { resource?: FhirResource }[]; total?: number; link?: { relation?: string; url?: string }[] };
        for (const e of bundle.entry ?? []) if (e.resource) out.push(e.resource);
        const next = bundle.link?.find((l) => l.relation === "next")?.url;
        if (!next || !options.canPage || (typeof bundle.total === "number" && out.length >= bundle.total)) {
          const keep = options.localFilter?.(resourceType, params);
          return keep ? out.filter(keep) : out;
        }
        request = { kind: "GET", resourceType, params: [], url: next };
      }
    },
    post(resourceType, body) {
      const reply = issue({ kind: "POST", resourceType, body });
      if (reply && !reply.ok) throw new ExpertError(`POST ${resourceType} failed: ${reply.error}`);
    },
    calculate(expression, expected) {
      if (!options.canCalculate) return expected;
      const reply = issue({ kind: "CALC", expression })!;
      const answer = reply.ok ? Number(reply.json) : NaN;
      if (!(Math.abs(answer - expected) <= 1e-9 * Math.max(1, Math.abs(expected)))) throw new ExpertError(`calculator ${JSON.stringify(expression)} answered ${reply.ok ? JSON.stringify(reply.json) : reply.error}, expected ${expected}`);
      return answer;
    },
    finish(answer) {
      throw new Finished(answer);
    },
  };
  try {
    plan(ctx);
  } catch (signal) {
    if (signal instanceof Pending) {
      if (signal.requests.length === 0) throw new ExpertError("plan stopped without a request");
      return signal.requests;
    }
    if (signal instanceof Finished) return [...batch, { kind: "FINISH", answer: signal.answer }];
    throw signal;
  }
  throw new ExpertError("plan returned without finishing");
}
