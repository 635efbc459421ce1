// One writer per output file: `<out>.lock` names the holder (PID, host, command, start time).
// Taken with link(2) of a complete temp file, so a lock file is never seen half-written; a lock
// whose PID no longer runs on this host is stale and taken over. Hand-written rather than
// proper-lockfile: that library keeps no PID or host in its lock (it refreshes a directory's mtime
// instead), and naming the holder is what a refused run must print.
import { linkSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { processRuns, storageError } from "../../env/util/index.ts";

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  started: string;
}

export class OutputLocked extends Error {
  constructor(
    readonly path: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      holder
        ? `${path} is being written by pid ${holder.pid} on ${holder.host} (${holder.command}, since ${holder.started}); wait for it to end or use another --out (delete ${path}.lock only if that process is gone)`
        : `${path} is locked by ${path}.lock, which names no holder; delete it if no run writes to ${path}`,
    );
    this.name = "OutputLocked";
  }
}

export interface OutputLock {
  readonly path: string;
  /** Removes the lock file if it is still this process's. Idempotent. */
  release(): void;
  /** A stale lock this one replaced, if any. */
  readonly replaced: LockHolder | undefined;
}

function readHolder(file: string): LockHolder | undefined | "missing" {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw e;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return typeof h.pid === "number" && typeof h.host === "string" ? h : undefined;
  } catch {
    return undefined;
  }
}


const same = (a: LockHolder, b: LockHolder) => a.pid === b.pid && a.host === b.host && a.started === b.started;

/** Take `<path>.lock` or throw OutputLocked naming the holder. Released at exit too. */
export function lockOutput(path: string, command: string): OutputLock {
  const file = `${path}.lock`;
  const me: LockHolder = { pid: process.pid, host: hostname(), command, started: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(me)}\n`);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw storageError(file, e);
  }
  let replaced: LockHolder | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, file);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const holder = readHolder(file);
      if (holder === "missing") continue;
      if (attempt >= 3 || holder === undefined || holder.host !== me.host || processRuns(holder.pid)) throw new OutputLocked(path, holder);
      // Stale: move it aside first, so a lock taken meanwhile by another run is never deleted.
      const aside = `${file}.${process.pid}.stale`;
      try {
        renameSync(file, aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw e;
      }
      const moved = readHolder(aside);
      if (moved !== "missing" && moved !== undefined && !same(moved, holder)) {
        try {
          linkSync(aside, file); // a live lock: put it back
        } catch {
          // another run holds it now; either way this one must look again
        }
      } else replaced = holder;
      unlinkSync(aside);
    }
  } finally {
    unlinkSync(tmp);
  }
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off("exit", release);
    const holder = readHolder(file);
    if (holder !== "missing" && holder !== undefined && same(holder, me)) unlinkSync(file);
  };
  process.on("exit", release);
  return { path, release, replaced };
}
