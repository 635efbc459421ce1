// Write a whole file or nothing: a temp file beside it, then rename.
import { existsSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const target = resolve(path);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, target);
  } catch (e) {
    if (existsSync(tmp)) unlinkSync(tmp);
    throw e;
  }
}
