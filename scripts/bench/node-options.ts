// The V8 settings the ehrgym CLI runs with (package.json "ehrgym.nodeOptions", applied by bin/ehrgym.js):
// bench processes use the same, so figures describe the product as it runs.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function productNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { ehrgym?: { nodeOptions?: string } };
  return (pkg.ehrgym?.nodeOptions ?? "").split(/\s+/).filter(Boolean);
}
