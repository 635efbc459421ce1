// The dataset build's worker thread (a piscina worker). It imports the TypeScript tasks through the
// loader the process runs under (the CLI's tsx), or, where there is none (vitest runs the tests
// without one), through tsx's scoped import.
import { move, transferableSymbol, valueSymbol } from "piscina";
import { tsImport } from "tsx/esm/api";

async function load(path) {
  try {
    return await import(new URL(path, import.meta.url).href);
  } catch (err) {
    if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
    return tsImport(path, import.meta.url);
  }
}

const { scanRange: scan } = await load("./scan.ts");
const { renderChunk: render } = await load("./chunk.ts");

export const scanRange = (task) => scan(task);

/** The rendered bytes are moved to the main thread, not copied. */
export function renderChunk(task) {
  const result = render(task);
  const buffers = [...new Set(Object.values(result).map((bytes) => bytes.buffer))];
  return move({ [transferableSymbol]: buffers, [valueSymbol]: result });
}
