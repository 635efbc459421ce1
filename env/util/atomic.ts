// Whole or nothing on disk: a file is written beside its target and renamed over it; a folder is
// filled beside its target and swapped in, the old one restored if the swap fails.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { storageError } from "./errors.ts";

/** Writes `data` to `path` through a temp file and a rename (a full disk: a StorageError naming `path`,
 *  and `path` as it was). `durable` fsyncs the file and its folder before returning (for journals a
 *  crash must not lose). Temp files that writers killed earlier left
 *  beside `path` (their process is gone) are removed first. */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { durable?: boolean } = {}): void {
  const target = resolve(path);
  mkdirSync(dirname(target), { recursive: true });
  removeStaleTemps(target, `${basename(target)}.`, /^tmp-(\d+)$/);
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    if (opts.durable) {
      const fd = openSync(tmp, "w");
      try {
        writeFileSync(fd, data);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } else writeFileSync(tmp, data);
    renameSync(tmp, target);
  } catch (e) {
    if (existsSync(tmp)) unlinkSync(tmp);
    throw storageError(path, e);
  }
  if (opts.durable) {
    const dir = openSync(dirname(target), "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }
}

/** Puts the finished folder `tmp` at `target`. A folder cannot be renamed over a non-empty one: the
 *  old one moves aside, the new one in, and the old one comes back if that fails. */
export function swapFolder(tmp: string, target: string): void {
  if (!existsSync(target)) {
    renameSync(tmp, target);
    return;
  }
  const old = join(dirname(target), `.${basename(target)}.old-${process.pid}`);
  renameSync(target, old);
  try {
    renameSync(tmp, target);
  } catch (err) {
    renameSync(old, target);
    throw err;
  }
  rmSync(old, { recursive: true, force: true });
}

/** Fills a fresh temp folder beside `target` with `fill`, then swaps it in; on any error the temp
 *  folder goes and `target` is left as it was. The parent folder must exist. Temp folders that
 *  writers killed earlier left beside `target` (their process is gone) are removed first. */
export async function writeFolderAtomic<T>(target: string, fill: (dir: string) => T | Promise<T>, onStale?: (name: string, pid: number) => void): Promise<T> {
  removeStaleTemps(target, `.${basename(target)}.`, /^(?:tmp|old)-(\d+)$/, onStale);
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  try {
    const result = await fill(tmp);
    swapFolder(tmp, target);
    return result;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    // A full disk names the file it failed on when the error says which, else the folder.
    throw storageError((err as NodeJS.ErrnoException | undefined)?.path ?? target, err);
  }
}

/** Whether process `pid` runs on this machine (EPERM: it runs, as another user). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes what killed writers of `target` left beside it: `prefix` + a name `kind` matches, whose
 *  number is the writer's process id, when that process is gone. */
function removeStaleTemps(target: string, prefix: string, kind: RegExp, onStale?: (name: string, pid: number) => void): void {
  const parent = dirname(target);
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    const m = name.startsWith(prefix) ? kind.exec(name.slice(prefix.length)) : null;
    const pid = Number(m?.[1]);
    if (!m || pid === process.pid || processRuns(pid)) continue;
    rmSync(join(parent, name), { recursive: true, force: true });
    onStale?.(name, pid);
  }
}
