// CLI start time of the README's form, `node bin/ehrgym.js --help`, beside `node -e 0` (Node's own
// start) in the same run: the two alternate, so a machine's load weighs on both alike. The first
// call is reported on its own, then the median of CLI_BENCH_RUNS (15) and the median of the
// per-pair differences (the target: the README's form adds at most 0.3 s to Node's start).
//   npm run bench -- cli
// npx is not measured: in this folder `npx ehrgym` installs the project into npm's npx cache and
// runs its `prepare` script (the whole build) on the first call, which is why the README avoids it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { median, report } from "./report.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RUNS = Number(process.env.CLI_BENCH_RUNS ?? 15);
const README_FORM = ["bin/ehrgym.js", "--help"];
const ADDED_TARGET_S = 0.3;

function seconds(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${r.status}`);
  return (performance.now() - t0) / 1000;
}

export async function run(): Promise<void> {
  if (!existsSync(new URL("../../dist/scripts/cli.js", import.meta.url))) throw new Error("dist/ is missing: run `npm run build` first");
  const nodes: number[] = [];
  const clis: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    clis.push(seconds(README_FORM));
    nodes.push(seconds(["-e", "0"]));
  }
  const node = median(nodes);
  const first = clis[0]! - nodes[0]!;
  report({
    name: "cli start, first call, node bin/ehrgym.js --help, added to node -e 0",
    value: first,
    unit: "s",
    target: `<= ${ADDED_TARGET_S} s`,
    ok: first <= ADDED_TARGET_S,
  });
  const cli = median(clis);
  report({ name: "cli start, node bin/ehrgym.js --help", value: cli, unit: "s", peer: { name: "node -e 0", value: node, ratio: cli / node } });
  const added = median(clis.map((c, i) => c - nodes[i]!));
  report({
    name: "cli start, node bin/ehrgym.js --help, added to node -e 0 (median of pairs)",
    value: added,
    unit: "s",
    target: `<= ${ADDED_TARGET_S} s`,
    ok: added <= ADDED_TARGET_S,
  });
}
