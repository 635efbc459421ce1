// A message as pieces of text, for servers that write observations into a reply buffer: a FHIR reply
// inside a message is given as its bundle's pieces (whose texts, escaped too, are cached per
// resource) instead of one string, so encoding a step neither escapes the resources again nor makes
// flat copies of the whole reply on the way to the socket.
import { bundlePieces, escapeJson, type BundleParts } from "../fhir/index.ts";
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

/** Appends pieces whose concatenation is `JSON.stringify(message)` to `out`, and returns it. */
export function messageJsonPieces(message: Message, out: string[] = []): string[] {
  const p = noted(message);
  const head = p === undefined ? "" : JSON.stringify({ ...message, content: "" });
  if (p === undefined || !head.endsWith(EMPTY_CONTENT_END)) {
    out.push(JSON.stringify(message));
    return out;
  }
  out.push(head.slice(0, -2) + escapeJson(p.before));
  bundlePieces(p.bundle, true, out);
  out.push(escapeJson(p.after) + '"}');
  return out;
}
