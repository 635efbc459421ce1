// The V8 settings and environment the ehrgym CLI runs with (package.json "ehrgym.nodeOptions" and
// "ehrgym.env", applied by bin/ehrgym.js): bench processes and `npm start` use the same, so figures
// describe the product as it runs.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface ProductSettings {
  nodeOptions?: string;
  env?: Record<string, string>;
}

function settings(): ProductSettings {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { ehrgym?: ProductSettings };
  return pkg.ehrgym ?? {};
}

export function productNodeOptions(): string[] {
  return (settings().nodeOptions ?? "").split(/\s+/).filter(Boolean);
}

/** This process's environment with the product's variables added where the user has not set them. */
export function productEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const [name, value] of Object.entries(settings().env ?? {})) env[name] ??= value;
  return env;
}
