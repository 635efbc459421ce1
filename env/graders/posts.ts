// The canonical POST extraction of PROTOCOL.md section 3, with the official text-protocol quirks.
import type { Action, Protocol } from "../protocol/index.ts";
import * as py from "../python/index.ts";

export interface AcceptedPost {
  url: string;
  payload: py.Py;
  /** Index of the action in the log. */
  index: number;
}

const isCreate = (a: Action): boolean => a.kind === "POST" || (a.tool !== undefined && a.tool.endsWith("_create"));

/** check_has_post: text = any agent turn containing "POST"; tools = any create call. */
export function hasPost(actions: readonly Action[], protocol: Protocol): boolean {
  if (protocol === "tools") return actions.some(isCreate);
  return actions.some((a) => a.raw.includes("POST"));
}

/** Python's str[4:] on code points. */
function sliceCodePoints(s: string, start: number): string {
  return Array.from(s).slice(start).join("");
}

/** extract_posts. Text protocol: agent turns containing "POST" whose next environment message contains
 *  "POST request accepted"; URL = first line [4:].strip(), payload = json.loads(rest) (skipped when it
 *  does not parse). A "POST"-containing turn with no following message (the last turn) makes the
 *  official code raise IndexError, modelled as a PyError. Tools: validated create calls. */
export function acceptedPosts(actions: readonly Action[], protocol: Protocol): AcceptedPost[] {
  const out: AcceptedPost[] = [];
  actions.forEach((a, index) => {
    if (protocol === "tools") {
      if (isCreate(a) && a.accepted === true) out.push({ url: a.url ?? "", payload: py.fromJs(a.body), index });
      return;
    }
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
