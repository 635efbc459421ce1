// Messages whose long content the stand-in keeps in parts (bodies.ts): to whatever reads `content` it
// is still the string (joined on first read), while the stand-in's own readers of long replies (digests,
// token counts, the expert's parse of a FHIR reply) take the parts, so no string of several MB is made.
import type { Message } from "../../env/core/index.ts";
import type { LongText } from "../long-text.ts";

const longs = new WeakMap<object, LongText>();

/** Gives `m` the content `text`, kept in parts. */
export function setLongContent(m: { content?: unknown }, text: LongText): void {
  let joined: string | undefined;
  Object.defineProperty(m, "content", { get: () => (joined ??= text.text()), enumerable: true, configurable: true });
  longs.set(m, text);
}

/** The parts of a message's content, when it is kept so. */
export const longContent = (m: Message): LongText | undefined => longs.get(m);
