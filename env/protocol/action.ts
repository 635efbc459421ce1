import { z } from "zod";

// The canonical action log (PROTOCOL.md section 3). Both protocols produce it; graders consume it.
export const ActionKind = z.enum(["GET", "POST", "PUT", "DELETE", "FINISH", "INVALID"]);
export type ActionKind = z.infer<typeof ActionKind>;

export const Action = z.object({
  kind: ActionKind,
  /** Text protocol: the agent turn exactly as sent (before fence stripping).
   *  Tool protocol: JSON of the tool call `{name, arguments}`. */
  raw: z.string(),
  url: z.string().optional(),
  body: z.unknown().optional(),
  /** POST/PUT/DELETE: whether the environment accepted it (text: reply said "POST request accepted";
   *  tools: a create call whose arguments validated). */
  accepted: z.boolean().optional(),
  /** Tool protocol: the tool name; `create` calls are the tool protocol's POSTs. */
  tool: z.string().optional(),
  response: z.object({ status: z.number().int(), text: z.string() }).optional(),
  /** Text protocol: the full environment message that followed this turn (absent for the last turn).
   *  The official graders test substrings of it ("POST request accepted"). */
  reply: z.string().optional(),
});
export type Action = z.infer<typeof Action>;

export const Protocol = z.enum(["text", "tools"]);
export type Protocol = z.infer<typeof Protocol>;

export const EpisodeStatus = z.enum(["running", "completed", "invalid_action", "limit_reached", "context_limit", "error"]);
export type EpisodeStatus = z.infer<typeof EpisodeStatus>;
