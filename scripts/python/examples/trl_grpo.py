#!/usr/bin/env python3
"""Plugging the ehrgym reward server into a TRL GRPO rollout loop.

Two ways, both over the same server (`npx tsx scripts/cli.ts serve --port 8000`):

1. Multi-turn rollouts: `play_episode` runs one episode with any `generate(messages) -> str`
   (vLLM, the trainer's own model, an API). GRPO samples a *group* of episodes per task;
   `rollout_group` opens them concurrently (one server episode each) and returns
   transcripts + rewards. Wire it into `GRPOTrainer(rollout_func=...)` (the exact
   rollout_func signature depends on your TRL version: it receives the batch prompts and
   must return token ids/logprobs of the completions plus any extra fields, which TRL
   passes to the reward functions as keyword arguments — pass `env_reward` through).

2. Single-completion scoring: when the trainer generates whole transcripts itself,
   `ehrgym_reward` is a plain GRPO reward function: it replays each completion on the
   server (`POST /v1/score`) and returns the binary rewards.

`--dry-run` runs both paths with a scripted policy instead of a model (no TRL needed):
    python3 scripts/python/examples/trl_grpo.py --url http://127.0.0.1:8000 --dry-run
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ehrgym_client import EhrGymClient  # noqa: E402

Generate = Callable[[List[Dict[str, Any]]], str]


def play_episode(client: EhrGymClient, generate: Generate, task_id: str, max_rounds: int = 8) -> Dict[str, Any]:
    """One text-protocol episode: returns {task_id, messages, reward, status}."""
    with client.episode(task_id=task_id, protocol="text", max_rounds=max_rounds) as ep:
        while not ep.done:
            ep.step(generate(ep.messages))
        return {"task_id": task_id, "messages": ep.messages, "reward": ep.reward, "status": ep.info["status"]}


def rollout_group(client: EhrGymClient, generate: Generate, task_id: str, group_size: int) -> List[Dict[str, Any]]:
    """GRPO's group: `group_size` independent episodes of the same task, run concurrently."""
    with ThreadPoolExecutor(max_workers=group_size) as pool:
        return list(pool.map(lambda _: play_episode(client, generate, task_id), range(group_size)))


def make_reward_func(client: EhrGymClient) -> Callable[..., List[float]]:
    """A GRPOTrainer reward function. The dataset needs a `task_id` column; completions are
    chat message lists (conversational datasets) or turn text (one assistant turn)."""

    def ehrgym_reward(prompts: List[Any], completions: List[Any], task_id: List[str], **kwargs: Any) -> List[float]:
        rewards = []
        for prompt, completion, tid in zip(prompts, completions, task_id):
            if isinstance(completion, str):
                completion = [{"role": "assistant", "content": completion}]
            history = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            result = client.score(history + completion, task_id=tid)
            rewards.append(float(result["reward"]))
        return rewards

    ehrgym_reward.__name__ = "ehrgym_reward"
    return ehrgym_reward


def scripted_policy(turns: List[str]) -> Generate:
    """A stand-in model for --dry-run: answers with the given turns in order, then FINISH([])."""

    def generate(messages: List[Dict[str, Any]]) -> str:
        done = sum(1 for m in messages if m["role"] == "assistant")
        return turns[done] if done < len(turns) else "FINISH([])"

    return generate


def train(url: str, model_name: str) -> None:  # pragma: no cover - needs a GPU and TRL
    from datasets import Dataset  # type: ignore
    from trl import GRPOConfig, GRPOTrainer  # type: ignore

    client = EhrGymClient(url)
    tasks = client.tasks(suite="mab-v1")["tasks"]
    rows = [{"prompt": client.create_episode(task_id=t["id"])["observation"], "task_id": t["id"]} for t in tasks]
    trainer = GRPOTrainer(
        model=model_name,
        reward_funcs=[make_reward_func(client)],
        args=GRPOConfig(output_dir="grpo-ehrgym", num_generations=8, max_completion_length=512),
        train_dataset=Dataset.from_list(rows),
    )
    trainer.train()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default=os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--dry-run", action="store_true", help="scripted policy instead of a model; prints JSON")
    parser.add_argument("--task-id", help="task for --dry-run (default: the first task)")
    parser.add_argument("--turns", default="[]", help="JSON list of turns for the scripted policy")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    args = parser.parse_args()
    if not args.dry_run:
        train(args.url, args.model)
        return 0
    client = EhrGymClient(args.url)
    task_id = args.task_id or client.tasks(limit=1)["tasks"][0]["id"]
    policy = scripted_policy(json.loads(args.turns))
    group = rollout_group(client, policy, task_id, args.group_size)
    reward_func = make_reward_func(client)
    scored = reward_func(
        prompts=[g["messages"][:1] for g in group],
        completions=[g["messages"][1:] for g in group],
        task_id=[task_id] * len(group),
    )
    print(json.dumps({"task_id": task_id, "rollout_rewards": [g["reward"] for g in group], "statuses": [g["status"] for g in group], "score_rewards": scored}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
