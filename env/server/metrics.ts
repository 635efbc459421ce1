// Prometheus text exposition (format 0.0.4) of the server's counters, gauges and step latency histogram.

const LATENCY_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

class Histogram {
  readonly counts = new Array<number>(LATENCY_BUCKETS_S.length).fill(0);
  sum = 0;
  count = 0;
  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < LATENCY_BUCKETS_S.length; i++) {
      if (seconds <= LATENCY_BUCKETS_S[i]!) {
        this.counts[i]!++;
        break;
      }
    }
  }
  lines(name: string, labels = ""): string[] {
    const out: string[] = [];
    let cumulative = 0;
    const sep = labels ? `${labels},` : "";
    for (let i = 0; i < LATENCY_BUCKETS_S.length; i++) {
      cumulative += this.counts[i]!;
      out.push(`${name}_bucket{${sep}le="${LATENCY_BUCKETS_S[i]}"} ${cumulative}`);
    }
    out.push(`${name}_bucket{${sep}le="+Inf"} ${this.count}`);
    const suffix = labels ? `{${labels}}` : "";
    out.push(`${name}_sum${suffix} ${this.sum}`, `${name}_count${suffix} ${this.count}`);
    return out;
  }
}

export class ServerMetrics {
  episodesStarted = 0;
  episodesEvicted = 0;
  steps = 0;
  rewardSum = 0;
  scored = 0;
  readonly finishedByStatus = new Map<string, number>();
  readonly rewardsByValue = new Map<string, number>();
  readonly requestsByRouteStatus = new Map<string, number>();
  readonly stepLatency = new Histogram();
  readonly requestLatency = new Map<string, Histogram>();
  wsSessions = 0;
  readonly wsMessagesByTypeOutcome = new Map<string, number>();
  readonly wsLatency = new Map<string, Histogram>();

  constructor(private readonly gauges: () => { open: number; retained: number }) {}

  episodeFinished(status: string, reward: number): void {
    this.finishedByStatus.set(status, (this.finishedByStatus.get(status) ?? 0) + 1);
    const key = String(reward);
    this.rewardsByValue.set(key, (this.rewardsByValue.get(key) ?? 0) + 1);
    this.rewardSum += reward;
  }

  request(route: string, status: number, seconds: number): void {
    const key = `route="${route}",status="${status}"`;
    this.requestsByRouteStatus.set(key, (this.requestsByRouteStatus.get(key) ?? 0) + 1);
    let h = this.requestLatency.get(route);
    if (!h) this.requestLatency.set(route, (h = new Histogram()));
    h.observe(seconds);
  }

  /** One /ws message: its type (reset, step, state, close, or "invalid"), "ok" or OpenEnv's error code. */
  wsMessage(type: string, outcome: string, seconds: number): void {
    const key = `type="${type}",outcome="${outcome}"`;
    this.wsMessagesByTypeOutcome.set(key, (this.wsMessagesByTypeOutcome.get(key) ?? 0) + 1);
    let h = this.wsLatency.get(type);
    if (!h) this.wsLatency.set(type, (h = new Histogram()));
    h.observe(seconds);
  }

  render(): string {
    const { open, retained } = this.gauges();
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: string[]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples);
    };
    metric("ehrgym_episodes_open", "gauge", "Episodes running (not finished).", [`ehrgym_episodes_open ${open}`]);
    metric("ehrgym_episodes_retained", "gauge", "Finished episodes kept for GET until deleted or evicted.", [`ehrgym_episodes_retained ${retained}`]);
    metric("ehrgym_episodes_started_total", "counter", "Episodes opened.", [`ehrgym_episodes_started_total ${this.episodesStarted}`]);
    metric("ehrgym_episodes_evicted_total", "counter", "Episodes dropped by idle TTL or capacity.", [`ehrgym_episodes_evicted_total ${this.episodesEvicted}`]);
    metric(
      "ehrgym_episodes_finished_total",
      "counter",
      "Episodes that ended, by status.",
      [...this.finishedByStatus].map(([s, n]) => `ehrgym_episodes_finished_total{status="${s}"} ${n}`),
    );
    metric("ehrgym_steps_total", "counter", "Agent turns stepped.", [`ehrgym_steps_total ${this.steps}`]);
    metric(
      "ehrgym_rewards_total",
      "counter",
      "Finished episodes by reward value.",
      [...this.rewardsByValue].map(([r, n]) => `ehrgym_rewards_total{reward="${r}"} ${n}`),
    );
    metric("ehrgym_reward_sum", "counter", "Sum of final rewards.", [`ehrgym_reward_sum ${this.rewardSum}`]);
    metric("ehrgym_scored_total", "counter", "Transcripts replayed by /v1/score.", [`ehrgym_scored_total ${this.scored}`]);
    metric("ehrgym_step_latency_seconds", "histogram", "Time to process one step inside the server.", this.stepLatency.lines("ehrgym_step_latency_seconds"));
    metric(
      "ehrgym_http_requests_total",
      "counter",
      "HTTP requests by route and status.",
      [...this.requestsByRouteStatus].map(([k, n]) => `ehrgym_http_requests_total{${k}} ${n}`),
    );
    metric(
      "ehrgym_http_request_duration_seconds",
      "histogram",
      "HTTP request latency by route.",
      [...this.requestLatency].flatMap(([route, h]) => h.lines("ehrgym_http_request_duration_seconds", `route="${route}"`)),
    );
    metric("ehrgym_ws_sessions_open", "gauge", "OpenEnv /ws connections open.", [`ehrgym_ws_sessions_open ${this.wsSessions}`]);
    metric(
      "ehrgym_ws_messages_total",
      "counter",
      "OpenEnv /ws messages by type and outcome (ok or OpenEnv's error code).",
      [...this.wsMessagesByTypeOutcome].map(([k, n]) => `ehrgym_ws_messages_total{${k}} ${n}`),
    );
    metric(
      "ehrgym_ws_message_duration_seconds",
      "histogram",
      "OpenEnv /ws message latency by type.",
      [...this.wsLatency].flatMap(([type, h]) => h.lines("ehrgym_ws_message_duration_seconds", `type="${type}"`)),
    );
    return `${lines.join("\n")}\n`;
  }
}
