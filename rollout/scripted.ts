// A policy that plays a fixed list of turns (a recorded or perturbed trajectory), ignoring replies.
import type { AgentTurn } from "../env/core/index.ts";
import type { Policy } from "./expert/index.ts";

export function createScriptedPolicy(turns: readonly AgentTurn[], name = "scripted"): Policy {
  return {
    name,
    act: async ({ messages }) => {
      const played = messages.filter((m) => m.role === "assistant").length;
      const turn = turns[played];
      if (turn === undefined) throw new Error(`scripted policy ran out of turns after ${played}`);
      return turn;
    },
  };
}

/** The agent turns of a transcript, as they were played (text, or assistant messages with tool calls). */
export function agentTurns(messages: readonly { role: string; content: string | null }[], protocol: "text" | "tools"): AgentTurn[] {
  return messages
    .filter((m) => m.role === "assistant")
    .map((m) => (protocol === "text" ? (m.content ?? "") : (m as AgentTurn)));
}
