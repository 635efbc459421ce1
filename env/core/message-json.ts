// A message as pieces of text, for servers that write observations into a reply buffer: a FHIR reply
// inside a message is given as its bundle's pieces (whose texts, escaped too, are cached per
// resource) instead of one string, so encoding a step neither escapes the resources again nor makes
// flat copies of the whole reply on the way to the socket.
import { bundlePieces, ESCAPE_SLICE, escapedSlices, escapeJson, type BundleParts } from "../fhir/index.ts";
import type { Message } from "./types.ts";

interface ContentParts {
  /** The content string these parts make up (the same string object the message was given). */
  content: string;
  before: string;
  bundle: BundleParts;
  after: string;
}

const parts = new WeakMap<Message, ContentParts>();

/** Notes that `message.content` is `before` + the bundle's pretty text + `after`. */
export function noteContentParts(message: Message, before: string, bundle: BundleParts, after: string): void {
  if (typeof message.content === "string") parts.set(message, { content: message.content, before, bundle, after });
}

/** The noted parts, unless a caller has replaced the content since (the same string object: a pointer comparison). */
function noted(message: Message): ContentParts | undefined {
  const p = parts.get(message);
  return p !== undefined && message.content === p.content ? p : undefined;
}

/** Pieces whose concatenation is `message.content` when it was noted; otherwise undefined. */
export function contentPieces(message: Message): string[] | undefined {
  const p = noted(message);
  if (p === undefined) return undefined;
  const out = [p.before];
  bundlePieces(p.bundle, false, out);
  out.push(p.after);
  return out;
}

const EMPTY_CONTENT_END = '"content":""}';

/**
 * Appends pieces whose concatenation is `JSON.stringify(message)` to `out`, and returns it. A noted
 * FHIR reply comes from its bundle's cached escaped texts; any other long content in slices
 * (escapedSlices), so no piece is a fresh string of the content's whole size. `joinPages` false:
 * a bundle's entries one by one, never a page's joined text (for a writer that copies the pieces at
 * once and keeps none of them).
 */
export function messageJsonPieces(message: Message, out: string[] = [], joinPages = true): string[] {
  const content = message.content;
  if (typeof content !== "string" || content.length <= ESCAPE_SLICE) {
    out.push(JSON.stringify(message));
    return out;
  }
  const head = JSON.stringify({ ...message, content: "" });
  if (!head.endsWith(EMPTY_CONTENT_END)) {
    out.push(JSON.stringify(message));
    return out;
  }
  const p = noted(message);
  if (p === undefined) {
    out.push(head.slice(0, -2));
    for (const piece of escapedSlices(content)) out.push(piece);
    out.push('"}');
    return out;
  }
  out.push(head.slice(0, -2) + escapeJson(p.before));
  bundlePieces(p.bundle, true, out, joinPages);
  out.push(escapeJson(p.after) + '"}');
  return out;
}

/**
 * Pieces whose concatenation is `JSON.stringify(value)` for an object whose `key` holds a list of
 * messages (a step reply's observation, an episode row's transcript), the messages written with
 * messageJsonPieces; undefined for any other value.
 */
export function jsonPiecesWithMessages(value: unknown, key: string, joinPages = true): string[] | undefined {
  const pieces: string[] = [];
  return writeJsonPieces(value, key, 0, joinPages, pieces, pieces) ? pieces : undefined;
}

/**
 * jsonPiecesWithMessages with the first `skip` messages left out: `before` ends with the list's `[`
 * and `after` starts where the JSON of messages[0..skip), joined by commas, would end (a `,` when
 * more messages follow it). For a writer that has those messages' bytes already (the request body
 * that sent them). Undefined for a value jsonPiecesWithMessages would not take, or fewer messages.
 */
export function jsonPiecesAroundMessages(value: unknown, key: string, skip: number, joinPages = true): { before: string[]; after: string[] } | undefined {
  const before: string[] = [];
  const after: string[] = [];
  return writeJsonPieces(value, key, skip, joinPages, before, after) ? { before, after } : undefined;
}

/** The pieces up to the list's `[` go to `before`, the rest (messages from `skip` on) to `after` (the same array for one list); false for a value not taken. */
function writeJsonPieces(value: unknown, key: string, skip: number, joinPages: boolean, before: string[], after: string[]): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value) || "toJSON" in value) return false;
  const record = value as Record<string, unknown>;
  if (!Array.isArray(record[key]) || (record[key] as unknown[]).length < skip) return false;
  let pieces = before;
  let sep = "{";
  for (const name of Object.keys(record)) {
    const v = record[name];
    if (name === key) {
      pieces.push(`${sep}${JSON.stringify(key)}:[`);
      pieces = after;
      const messages = v as unknown[];
      for (let i = skip; i < messages.length; i++) {
        if (i > 0) pieces.push(",");
        const m = messages[i];
        if (m !== null && typeof m === "object" && !Array.isArray(m) && !("toJSON" in m)) messageJsonPieces(m as Message, pieces, joinPages);
        else pieces.push(JSON.stringify(m) ?? "null");
      }
      pieces.push("]");
    } else {
      const json = JSON.stringify(v) as string | undefined; // undefined and functions are left out, as JSON.stringify does
      if (json === undefined) continue;
      pieces.push(`${sep}${JSON.stringify(name)}:${json}`);
    }
    sep = ",";
  }
  pieces.push(sep === "{" ? "{}" : "}");
  return true;
}

/** Whether JSON.stringify(a) === JSON.stringify(b), without flattening long contents that are the same FHIR reply noted twice (noteContentParts). */
export function sameMessageJson(a: Message, b: Message): boolean {
  if (a === b) return true;
  if (typeof a.content !== typeof b.content) return false;
  if (JSON.stringify({ ...a, content: "" }) !== JSON.stringify({ ...b, content: "" })) return false;
  if (a.content === null) return true;
  // Two FHIR replies built apart are two ropes: comparing them would flatten both (copies as long as the reply).
  const pa = noted(a);
  const pb = noted(b);
  if (pa !== undefined && pb !== undefined && pa.bundle === pb.bundle && pa.before === pb.before && pa.after === pb.after) return true;
  return a.content === b.content;
}

/** Total UTF-8 bytes of `pieces`. */
export function utf8Length(pieces: readonly string[]): number {
  let n = 0;
  for (const p of pieces) n += Buffer.byteLength(p);
  return n;
}

/** Writes `pieces` one after the other into `out` from `at`; returns the offset after them. */
export function writeUtf8(out: Buffer, at: number, pieces: readonly string[]): number {
  for (const p of pieces) at += out.write(p, at, "utf8");
  return at;
}

/** The UTF-8 bytes of `pieces`, one after the other, in one exactly sized buffer. */
export function utf8Of(pieces: readonly string[]): Buffer {
  const out = Buffer.allocUnsafe(utf8Length(pieces));
  writeUtf8(out, 0, pieces);
  return out;
}
