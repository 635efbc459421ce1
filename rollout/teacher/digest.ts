// Canonical digests of chat messages: what identifies a conversation however the client re-serialises it
// (null vs "" content, extra fields such as `refusal`), so a conversation prefix can key episode state.
import { createHash, hash } from "node:crypto";
import type { Message } from "../../env/core/index.ts";

const SEP = "\u0001";

export function messageDigest(m: Message): string {
  const h = createHash("sha1");
  h.update(m.role === "system" ? "system" : m.role);
  h.update(SEP);
  h.update(m.content ?? "");
  for (const c of m.tool_calls ?? []) h.update(`${SEP}call${SEP}${c.id}${SEP}${c.function.name}${SEP}${c.function.arguments}`);
  if (m.tool_call_id !== undefined) h.update(`${SEP}id${SEP}${m.tool_call_id}`);
  return h.digest("hex");
}

/** A digest of digests (a conversation prefix, a whole request). */
export function combine(parts: readonly string[]): string {
  const h = createHash("sha1");
  for (const p of parts) h.update(p).update(SEP);
  return h.digest("hex");
}

export function textDigest(text: string): string {
  return hash("sha1", text, "hex");
}
