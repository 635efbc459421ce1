// The package version written into every row and dataset card.
import { readFileSync } from "node:fs";

/** The package.json above this module: one folder up from the sources, two from dist/. */
function packageJson(): { version: string } {
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version: string };
      if (pkg.name === "ehrgym") return pkg;
    } catch {
      // not there: look one folder higher
    }
  }
  throw new Error("ehrgym: package.json not found beside the code");
}

export const EHRGYM_VERSION: string = packageJson().version;
