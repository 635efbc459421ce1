// The calculator tool's cost per call, over expressions a model writes for the V2 tasks (an age in days
// with datetime, a dose with Decimal, a BSA with math.sqrt, a mean with sum): target <= 1 ms at the median.
import { calculate } from "../../env/protocol/index.ts";
import { percentile, report } from "./report.ts";

const EXPRESSIONS = [
  "(datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days",
  "(datetime.date(2023, 11, 13) - datetime.date(1953, 11, 13)).days // 365",
  "(datetime.datetime(2023, 11, 13, 10, 15) - datetime.datetime.fromisoformat('2023-11-12T08:00:00+00:00'.replace('+00:00', ''))).total_seconds() / 3600",
  "Decimal('3.5') - Decimal('3.1')",
  "(Decimal('3.5') - Decimal('3.1')) / Decimal('0.1') * 10",
  "(Decimal('70.5') * Decimal('0.5')).quantize(Decimal('0.01'))",
  "math.sqrt(170 * 70 / 3600)",
  "math.sqrt(165.1 * 82.3 / 3600)",
  "sum([3.9, 4.1, 4.4]) / 3",
  "(3.5 - 3.1) / 0.1 * 10",
  "0.007184 * 170 ** 0.725 * 70 ** 0.425",
  "1.2 * 70 / 0.9 if 70 > 50 else 0",
];

export async function run(): Promise<void> {
  for (let i = 0; i < 200; i++) for (const e of EXPRESSIONS) calculate(e); // warm-up
  const times: number[] = [];
  for (let round = 0; round < 300; round++) {
    for (const e of EXPRESSIONS) {
      const t = performance.now();
      calculate(e);
      times.push(performance.now() - t);
    }
  }
  times.sort((a, b) => a - b);
  const p50 = percentile(times, 50);
  report({ name: "calculator call p50", value: p50, unit: "ms", target: "<= 1 ms", ok: p50 <= 1 });
  report({ name: "calculator call p99", value: percentile(times, 99), unit: "ms" });
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
