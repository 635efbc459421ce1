#!/usr/bin/env node
// The `ehrgym` command: the compiled CLI in dist/ (built from the TypeScript sources by `npm ci`
// through the `prepare` script, or by `npm run build`), run in this process.
import { existsSync } from "node:fs";

const cli = new URL("../dist/scripts/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("ehrgym: the compiled CLI (dist/) is missing: run `npm run build` in the ehrgym folder (`npm ci` does it)\n");
  process.exit(1);
}
await import(cli.href);
