// CLI start time: `npx ehrgym --help`, `node bin/ehrgym.js --help` and `node dist/scripts/cli.js
// --help` (the compiled CLI itself), beside `node -e 0` (Node's own start) and `npx -c true` (npm's
// own start, running nothing) measured in the same run; medians of CLI_BENCH_RUNS (7).
//   npm run bench -- cli
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { median, report } from "./report.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RUNS = Number(process.env.CLI_BENCH_RUNS ?? 7);

function seconds(command: string, args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(command, args, { cwd: ROOT, stdio: "ignore" });
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${r.status}`);
    times.push((performance.now() - t0) / 1000);
  }
  return median(times);
}

export async function run(): Promise<void> {
  if (!existsSync(new URL("../../dist/scripts/cli.js", import.meta.url))) throw new Error("dist/ is missing: run `npm run build` first");
  const node = seconds(process.execPath, ["-e", "0"]);
  const peer = (value: number) => ({ name: "node -e 0", value: node, ratio: value / node });
  const cli = seconds(process.execPath, ["dist/scripts/cli.js", "--help"]);
  report({ name: "cli start, node dist/scripts/cli.js --help", value: cli, unit: "s", target: "< 1 s", ok: cli < 1, peer: peer(cli) });
  const bin = seconds(process.execPath, ["bin/ehrgym.js", "--help"]);
  report({ name: "cli start, node bin/ehrgym.js --help", value: bin, unit: "s", target: "< 1 s", ok: bin < 1, peer: peer(bin) });
  const npm = seconds("npx", ["-c", "true"]);
  const npx = seconds("npx", ["ehrgym", "--help"]);
  report({ name: "cli start, npx ehrgym --help", value: npx, unit: "s", target: "< 1 s", ok: npx < 1, peer: peer(npx) });
  report({
    name: "npm's own start, npx -c true (runs nothing)",
    value: npm,
    unit: "s",
    peer: { name: "npx ehrgym --help", value: npx, ratio: npm / npx, note: "the share of npx ehrgym --help that is npm's" },
  });
}
