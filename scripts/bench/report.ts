// One line per figure: `name: value unit (target: ...)` plus, where a peer ran in the same process, the ratio.

export interface Figure {
  name: string;
  value: number;
  unit: string;
  target?: string;
  /** true/false when the target is checkable, undefined otherwise. */
  ok?: boolean;
  peer?: { name: string; value: number; ratio: number; note?: string };
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  if (Math.abs(value) >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

export function report(fig: Figure): void {
  let line = `${fig.name}: ${formatNumber(fig.value)} ${fig.unit}`;
  if (fig.target) line += ` (target: ${fig.target}${fig.ok === undefined ? "" : fig.ok ? ", met" : ", MISSED"})`;
  if (fig.peer) {
    line += ` | ${fig.peer.name}: ${formatNumber(fig.peer.value)} ${fig.unit}, ratio ${fig.peer.ratio >= 10 ? fig.peer.ratio.toFixed(0) : fig.peer.ratio.toPrecision(2)}x`;
    if (fig.peer.note) line += ` (${fig.peer.note})`;
  }
  console.log(line);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}
