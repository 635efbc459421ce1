"""TRL: the real GRPOTrainer trains a tiny model against a real `ehrgym serve` through ehrgym.trl's
environment_factory class, its /v1/score reward function and its prompt dataset. The model is
scripted (tiny_lm.scripted_pair) to answer every task1 prompt with finish(["Patient not found"]):
right for the not-found patient, wrong for the found one, so the rewards compared are 1s and 0s."""

from __future__ import annotations

import ast
import json
import os
from typing import Any, Dict, List

from conftest import TOKEN, ChildServer
from ehrgym import Client
from ehrgym.trl import environment, prompt_dataset, score_reward
from tiny_lm import scripted_pair, tiny_grpo_config


def found_task1(client: Client) -> Dict[str, Any]:
    return next(t.raw for t in client.tasks(type="task1").tasks if t.raw.get("branch") == "found")


def test_grpo_trainer_plays_server_episodes(server: ChildServer, client: Client, tmp_path: Any) -> None:
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from transformers.utils import get_json_schema
    from trl import GRPOTrainer

    dataset = prompt_dataset(server.url, token=TOKEN, type="task1", limit=2)
    assert len(dataset) == 2 and all(row["prompt"][-1]["role"] == "user" for row in dataset)
    answer = ["Patient not found"]
    solutions = {t.id: t.raw.get("sol") for t in client.tasks(type="task1").tasks}
    assert sorted(solutions[row["task_id"]] == answer for row in dataset) == [False, True]
    server_tools = client.create_episode(task_id=dataset[0]["task_id"], protocol="tools")
    client.delete_episode(server_tools.episode_id)
    tool_names = [t["function"]["name"] for t in server_tools.tools or []]

    Base = environment(server.url, token=TOKEN, max_rounds=4)
    resets: List[str] = []
    rewards: List[float] = []
    calls: List[List[Any]] = []

    class EhrGymEnv(Base):  # type: ignore[misc, valid-type]
        def reset(self, **row: Any) -> Any:
            resets.append(row["task_id"])
            return super().reset(**row)

        def get_reward(self) -> float:
            calls.append([c["function"] for m in self.messages for c in m.get("tool_calls") or []])
            reward = super().get_reward()
            rewards.append(reward)
            return reward

    tokenizer, model = scripted_pair({"name": "finish", "arguments": {"value": answer}}, seed=0)
    args = tiny_grpo_config(tmp_path, max_completion_length=24, max_tool_calling_iterations=2, max_steps=2)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[score_reward(server.url, token=TOKEN, max_rounds=4)],
        train_dataset=dataset,
        environment_factory=EhrGymEnv,
        args=args,
    )
    # The model is offered ehrgym's tools: same names, same parameters, same required ones.
    offered = {t.__name__: get_json_schema(t)["function"]["parameters"] for t in trainer.tools}
    assert sorted(offered) == sorted(tool_names)
    for tool in server_tools.tools or []:
        params = tool["function"]["parameters"]
        assert set(offered[tool["function"]["name"]]["properties"]) == set(params.get("properties", {}))
        assert set(offered[tool["function"]["name"]].get("required", [])) == set(params.get("required", []))
    trainer.train()

    # Each step's group of 2 rollouts played one row: reset got that row's task_id.
    assert resets == [dataset[0]["task_id"]] * 2 + [dataset[1]["task_id"]] * 2
    # The model's tool call reached the server, which graded it: 1 where it is the task's answer.
    assert calls == [[{"name": "finish", "arguments": json.dumps({"value": answer})}]] * 4
    assert rewards == [float(solutions[task_id] == answer) for task_id in resets]
    assert 0.0 in rewards and 1.0 in rewards
    logged = [h for h in trainer.state.log_history if "rewards/EhrGymEnv/mean" in h]
    assert len(logged) == 2
    for step, entry in enumerate(logged):
        episode_rewards = rewards[2 * step : 2 * step + 2]
        assert entry["rewards/EhrGymEnv/mean"] == sum(episode_rewards) / 2
        # /v1/score replaying the same completions agrees with the live episodes.
        assert entry["rewards/ehrgym_score/mean"] == entry["rewards/EhrGymEnv/mean"]
    assert client.health().episodes_open == 0


def test_scripted_tool_calls_get_reward_one(server: ChildServer, client: Client) -> None:
    task = found_task1(client)
    env = environment(server.url, token=TOKEN)()
    other = next(t.id for t in client.tasks(type="task2").tasks)
    env.reset(task_id=other, prompt=[])  # left unfinished: the next reset closes it
    assert client.health().episodes_open == 1
    assert env.reset(task_id=task["id"], prompt=[]) is None
    assert client.health().episodes_open == 1
    # MedAgentBench V2's patient search: four fields, each required and nullable (a null is sent as null);
    # the reply is Python's str() of the JSON, as the original sends it
    bundle = ast.literal_eval(env.patient_search(birthdate=None, family=None, given=None, identifier=task["sol"][0]))
    assert bundle["total"] == 1
    env.finish(value=task["sol"])
    assert env.done
    assert env.get_reward() == 1.0
    assert client.health().episodes_open == 0
    assert env.finish(value=task["sol"]).startswith("The episode has ended")


INVALID_CALL = {"name": "fhir_observation_search", "arguments": {"search_params": {"patient": "x"}}}


def protocol_error(client: Client, task_id: str, call: Dict[str, Any]) -> str:
    """What the server's tool protocol says of `call` as an episode's first turn (the step's info.error)."""
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
    with client.episode(task_id=task_id, protocol="tools") as ep:
        result = ep.step(message)
    assert result.done and result.observation == []
    return str(result.info["error"])


def test_an_invalid_tool_call_answers_why_the_episode_ended(server: ChildServer, client: Client) -> None:
    task = found_task1(client)
    expected = protocol_error(client, task["id"], INVALID_CALL)
    # Which call failed, why, and that the run ended.
    assert expected.startswith("fhir_observation_search: invalid argument search_params.code") and "the run ends" in expected
    env = environment(server.url, token=TOKEN)()
    env.reset(task_id=task["id"], prompt=[])
    assert env.fhir_observation_search(**INVALID_CALL["arguments"]) == expected
    assert env.done and env.get_reward() == 0.0


def test_grpo_trainer_shows_the_model_an_invalid_calls_error(server: ChildServer, client: Client, tmp_path: Any) -> None:
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from trl import GRPOTrainer

    dataset = prompt_dataset(server.url, token=TOKEN, type="task1", limit=1)
    expected = protocol_error(client, dataset[0]["task_id"], INVALID_CALL)
    logged: List[Any] = []

    def seen(prompts: List[Any], completions: List[Any], **_: Any) -> List[float]:
        logged.extend(completions)
        return [0.0] * len(completions)

    tokenizer, model = scripted_pair(INVALID_CALL, seed=0)
    # max_completion_length: the tool answers are in the completion, one token per byte
    args = tiny_grpo_config(tmp_path, max_completion_length=512, max_tool_calling_iterations=2, max_steps=1)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[seen], train_dataset=dataset, environment_factory=environment(server.url, token=TOKEN), args=args)
    trainer.train()

    # The completion the model continues from (and the trainer logs): the call, then the protocol's
    # error as the tool's answer; a second call is told the episode has ended.
    assert len(logged) == 2
    for completion in logged:
        answers = [m["content"] for m in completion if m["role"] == "tool"]
        assert answers[0] == expected, completion
        assert all(a.startswith("The episode has ended") for a in answers[1:]), answers
    assert client.health().episodes_open == 0


def test_prompt_dataset_takes_a_curriculum_file(server: ChildServer, client: Client, tmp_path: Any) -> None:
    import json

    import pytest

    served = client.tasks().tasks
    chosen = [served[3].raw, served[1].raw]
    path = tmp_path / "curriculum.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in chosen))  # the file `ehrgym tasks select` writes
    dataset = prompt_dataset(server.url, token=TOKEN, tasks=str(path))
    assert sorted(dataset["task_id"]) == sorted(t["id"] for t in chosen)
    assert all(row["prompt"][-1]["role"] == "user" for row in dataset)
    path.write_text(json.dumps({**chosen[0], "id": "not-served"}) + "\n")
    with pytest.raises(ValueError, match="not served by .*start the server with --tasks"):
        prompt_dataset(server.url, token=TOKEN, tasks=str(path))
