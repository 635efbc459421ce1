// What makes two runs' replies differ when their requests are the same: Bundle and paging ids, the
// times a reply or a write carries, a created resource's id and meta.source. Live stamps are HAPI's
// (random ids, the clock, ids shared by the whole server); reproducible stamps derive each from the
// episode's own sequence of requests, so the same requests in the same episode give the same bytes
// whichever process, shard or concurrency ran them (README "Run at scale", `--reproducible-fhir`).
import { createHash, randomFillSync, randomUUID } from "node:crypto";
import { nowInstant } from "./engine.ts";

/** The time of every reply and write with reproducible stamps: MedAgentBench's "now", as HAPI writes instants. */
export const REPRODUCIBLE_TIME = "2023-11-13T10:15:00.000+00:00";

export interface Stamps {
  /** The id of a Bundle or of a paged search, the `episode`'s next one; `request` is what was asked. */
  id(episode: object, request: string): string;
  /** The instant a reply or a write carries. */
  now(): string;
  /** meta.source of a write (HAPI: "#" and 16 random characters). */
  source(type: string, id: string, version: number): string;
  /** The id of a resource an episode creates: `firstFree` is past every base id, `created` counts the episode's creates so far, `allocate` takes the next server-wide one. */
  newId(firstFree: number, created: number, allocate: () => string): string;
}

const SOURCE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Random bytes drawn 4 KB at a time: a `randomBytes` call per write cost more than the write's own work. */
const entropy = Buffer.allocUnsafe(4096);
let entropyAt = entropy.length;

function sourceOf(bytes: Uint8Array): string {
  let s = "#";
  for (let i = 0; i < 16; i++) s += SOURCE_CHARS[bytes[i]! % SOURCE_CHARS.length];
  return s;
}

export const LIVE_STAMPS: Stamps = {
  id: () => randomUUID(),
  now: nowInstant,
  source() {
    if (entropyAt + 16 > entropy.length) {
      randomFillSync(entropy);
      entropyAt = 0;
    }
    entropyAt += 16;
    return sourceOf(entropy.subarray(entropyAt - 16, entropyAt));
  },
  newId: (_firstFree, _created, allocate) => allocate(),
};

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** A UUID-shaped name for `text` (RFC 9562 version 8: its bits are the application's). */
function uuidOf(text: string): string {
  const b = sha256(text);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Stamps derived from each episode's requests in order, with one fixed time. */
export function reproducibleStamps(time: string = REPRODUCIBLE_TIME): Stamps {
  const issued = new WeakMap<object, number>();
  return {
    id(episode, request) {
      const n = issued.get(episode) ?? 0;
      issued.set(episode, n + 1);
      return uuidOf(`${n}\n${request}`);
    },
    now: () => time,
    source: (type, id, version) => sourceOf(sha256(`${type}/${id}/_history/${version}`)),
    newId: (firstFree, created) => String(firstFree + created),
  };
}
