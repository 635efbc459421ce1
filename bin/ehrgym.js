#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so the package works without a build step, with the V8
// settings of package.json "ehrgym.nodeOptions" (32 MB semi-spaces, pinned: a young-generation GC
// copies what open episodes kept since the previous one, so its pause, the reward server's tail
// latency, grows with the young generation; a smaller one promotes more, and the mark-compacts that
// follow take the CPU a 2-core machine does not have to spare), and the environment of
// "ehrgym.env": glibc's malloc keeps freed memory for reuse instead of handing it back to the
// kernel (the build's and the runner's buffers are MBs each; memory the kernel hands out afresh
// costs a page fault per 4 KB, on VMs several microseconds each).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const tsxCli = require.resolve("tsx/cli");
const { nodeOptions = "", env: productEnv = {} } = require("../package.json").ehrgym ?? {};
// NODE_OPTIONS reaches the process tsx starts for the script; a setting the user made wins.
const user = process.env.NODE_OPTIONS ?? "";
const ours = nodeOptions.split(/\s+/).filter((flag) => flag && !user.includes(flag.split("=")[0]));
const result = spawnSync(process.execPath, [tsxCli, join(here, "..", "scripts", "cli.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...productEnv, ...process.env, NODE_OPTIONS: [...ours, user].filter(Boolean).join(" ") },
});
process.exit(result.status ?? 1);
