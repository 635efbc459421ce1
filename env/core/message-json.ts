// A message's JSON text, for servers that send observations as JSON: a FHIR reply inside a message
// is encoded from its parts (whose escaped texts are cached per resource) instead of by escaping the
// whole reply again on every step. The result is always exactly JSON.stringify(message).
import { bundleJsonString, escapeJson, type BundleParts } from "../fhir/index.ts";
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

const EMPTY_CONTENT_END = '"content":""}';

/** `JSON.stringify(message)`, spliced from cached parts when the message's content was noted. */
export function messageJson(message: Message): string {
  const p = parts.get(message);
  // Same string object: a pointer comparison. A caller that replaced the content gets the plain path.
  if (p === undefined || message.content !== p.content) return JSON.stringify(message);
  const head = JSON.stringify({ ...message, content: "" });
  if (!head.endsWith(EMPTY_CONTENT_END)) return JSON.stringify(message);
  return `${head.slice(0, -2)}${escapeJson(p.before)}${bundleJsonString(p.bundle).slice(1, -1)}${escapeJson(p.after)}"}`;
}
