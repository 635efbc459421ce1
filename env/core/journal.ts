// Append-only, fsynced journal of the writes RemoteBackend episodes make on a remote server, so the
// rollback survives a crash: on start-up every resource created and not yet deleted is deleted.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { z } from "zod";
import { writeFileAtomic } from "../util/index.ts";

export const JournalEntry = z.discriminatedUnion("op", [
  /** Written before a create is sent (a crash between this and "created" may leave one resource behind). */
  z.object({ op: z.literal("intent"), episode: z.string(), type: z.string() }),
  z.object({ op: z.literal("created"), episode: z.string(), type: z.string(), id: z.string() }),
  z.object({ op: z.literal("deleted"), episode: z.string(), type: z.string(), id: z.string() }),
]);
export type JournalEntry = z.infer<typeof JournalEntry>;

/**
 * Reads a journal: what was created and not deleted, in creation order, and the intents never followed
 * by a "created" line (the create may or may not have reached the server). A torn last line (crash
 * mid-write) and unknown lines are ignored.
 */
export function readJournal(path: string) {
  const live = new Map<string, { episode: string; type: string; id: string }>();
  const intents = new Map<string, number>();
  for (const line of existsSync(path) ? readFileSync(path, "utf8").split("\n") : []) {
    if (!line.trim()) continue;
    let entry: JournalEntry;
    try {
      entry = JournalEntry.parse(JSON.parse(line));
    } catch {
      continue;
    }
    const key = `${entry.type}/${"id" in entry ? entry.id : ""}`;
    if (entry.op === "intent") intents.set(entry.episode, (intents.get(entry.episode) ?? 0) + 1);
    else if (entry.op === "created") {
      live.set(key, { episode: entry.episode, type: entry.type, id: entry.id });
      intents.set(entry.episode, (intents.get(entry.episode) ?? 1) - 1);
    } else live.delete(key);
  }
  const unresolvedIntents = [...intents.values()].reduce((sum, n) => sum + Math.max(0, n), 0);
  return { created: [...live.values()], unresolvedIntents };
}

export class Journal {
  private fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, "a");
  }

  append(entry: JournalEntry): void {
    writeSync(this.fd, JSON.stringify(entry) + "\n");
    fsyncSync(this.fd);
  }

  /** Replaces the journal with the given entries (temp file, fsync, rename). */
  rewrite(entries: JournalEntry[]): void {
    writeFileAtomic(this.path, entries.map((e) => JSON.stringify(e) + "\n").join(""), { durable: true });
    closeSync(this.fd);
    this.fd = openSync(this.path, "a");
  }

  close(): void {
    closeSync(this.fd);
  }
}
