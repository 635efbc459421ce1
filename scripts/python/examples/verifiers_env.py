#!/usr/bin/env python3
"""A verifiers-style multi-turn environment backed by the ehrgym reward server.

It has the shape of `verifiers`' MultiTurnEnv (setup_state / env_response / is_completed /
rollout), so it drops into code written for that library; it needs only the standard library
and the ehrgym client. The environment's replies and the reward come from the server, so they
are exactly what the official MedAgentBench harness would produce.

    env = EhrGymVerifiersEnv("http://127.0.0.1:8000")
    result = env.rollout(openai_client, "my-model", {"task_id": "task1_1"})
    print(result["reward"])

`--dry-run` plays one episode with scripted turns (no model) and prints the result as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ehrgym_client import EhrGymClient  # noqa: E402

Messages = List[Dict[str, Any]]


class EhrGymVerifiersEnv:
    def __init__(self, url: str, protocol: str = "text", max_rounds: int = 8, token: Optional[str] = None):
        self.client = EhrGymClient(url, token=token)
        self.protocol = protocol
        self.max_rounds = max_rounds

    # -- verifiers' MultiTurnEnv hooks ---------------------------------------------------------

    def setup_state(self, task: Dict[str, Any]) -> Tuple[Messages, Dict[str, Any]]:
        """Open a server episode; the prompt is the server's first message(s)."""
        created = self.client.create_episode(task_id=task["task_id"], protocol=self.protocol, max_rounds=self.max_rounds)
        state = {"episode_id": created["episode_id"], "tools": created.get("tools"), "done": False, "reward": 0.0, "info": created["info"]}
        return created["observation"], state

    def env_response(self, messages: Messages, state: Dict[str, Any]) -> Tuple[Messages, Dict[str, Any]]:
        """Send the last assistant message; the reply is the environment's new messages."""
        last = messages[-1]
        if self.protocol == "text":
            result = self.client.step(state["episode_id"], action=last.get("content") or "")
        else:
            result = self.client.step(state["episode_id"], message=last)
        state.update(done=bool(result["terminated"] or result["truncated"]), reward=result["reward"], info=result["info"])
        return result["observation"], state

    def is_completed(self, messages: Messages, state: Dict[str, Any]) -> bool:
        return bool(state["done"])

    # -- rubric: the server's grader is the single reward function -------------------------------

    def reward(self, state: Dict[str, Any]) -> float:
        return float(state["reward"])

    def rollout(self, client: Any, model: str, task: Dict[str, Any], **sampling: Any) -> Dict[str, Any]:
        """Play one episode with an OpenAI-compatible client (`client.chat.completions.create`)."""
        prompt, state = self.setup_state(task)
        messages = list(prompt)
        try:
            while not self.is_completed(messages, state):
                kwargs = dict(sampling)
                if state["tools"]:
                    kwargs["tools"] = state["tools"]
                choice = client.chat.completions.create(model=model, messages=messages, **kwargs).choices[0].message
                assistant = {"role": "assistant", "content": choice.content}
                if getattr(choice, "tool_calls", None):
                    assistant["tool_calls"] = [
                        {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in choice.tool_calls
                    ]
                messages.append(assistant)
                reply, state = self.env_response(messages, state)
                messages.extend(reply)
        finally:
            self.client.delete_episode(state["episode_id"])
        return {"prompt": prompt, "completion": messages[len(prompt) :], "reward": self.reward(state), "metrics": {"status": state["info"]["status"]}, "state": state}


class _ScriptedChat:
    """A stand-in for an OpenAI client: replies with the given turns, then FINISH([])."""

    def __init__(self, turns: List[str]):
        self.turns = turns
        self.chat = self
        self.completions = self

    def create(self, model: str, messages: Messages, **kwargs: Any) -> Any:
        done = sum(1 for m in messages if m["role"] == "assistant")
        text = self.turns[done] if done < len(self.turns) else "FINISH([])"
        message = type("Msg", (), {"content": text, "tool_calls": None})()
        return type("Resp", (), {"choices": [type("Choice", (), {"message": message})()]})()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default=os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--task-id", required=True)
    parser.add_argument("--turns", default="[]", help="JSON list of turns for the scripted model")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    env = EhrGymVerifiersEnv(args.url)
    if not args.dry_run:
        parser.error("only --dry-run is runnable without a model; import EhrGymVerifiersEnv in your trainer")
    result = env.rollout(_ScriptedChat(json.loads(args.turns)), "scripted", {"task_id": args.task_id})
    print(json.dumps({"reward": result["reward"], "status": result["metrics"]["status"], "completion_messages": len(result["completion"])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
