// The canonical POST extraction of PROTOCOL.md section 3: the official substring rules over agent items.
import type { Action, Protocol } from "../protocol/index.ts";
import * as py from "../python/index.ts";

export interface AcceptedPost {
  url: string;
  payload: py.Py;
  /** Index of the action in the log. */
  index: number;
}

/** check_has_post: any agent item containing "POST" (text turns, or the tool protocol's history items). */
export function hasPost(actions: readonly Action[], _protocol?: Protocol): boolean {
  return actions.some((a) => a.raw.includes("POST"));
}

/** Python's str[4:] on code points. */
function sliceCodePoints(s: string, start: number): string {
  return Array.from(s).slice(start).join("");
}

/** extract_posts: agent items containing "POST" whose next item (text: the environment message; tools:
 *  the next history item) contains "POST request accepted"; URL = first line [4:].strip(), payload =
 *  json.loads(rest) (skipped when it does not parse). A "POST"-containing item with nothing after it
 *  makes the official code raise IndexError, modelled as a PyError. */
export function acceptedPosts(actions: readonly Action[], _protocol?: Protocol): AcceptedPost[] {
  const out: AcceptedPost[] = [];
  actions.forEach((a, index) => {
    if (!a.raw.includes("POST")) return;
    if (a.reply === undefined)
      throw new py.PyError("IndexError", "list index out of range (a turn containing \"POST\" has no following message: extract_posts reads history[idx+1])");
    if (!a.reply.includes("POST request accepted")) return;
    const lines = a.raw.split("\n");
    const url = py.pyStrip(sliceCodePoints(lines[0]!, 4));
    const parsed = py.tryJsonLoads(lines.slice(1).join("\n"));
    if (parsed.ok) out.push({ url, payload: parsed.value, index });
  });
  return out;
}
