// The package version written into every row and dataset card.
import { createRequire } from "node:module";

export const EHRGYM_VERSION: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
