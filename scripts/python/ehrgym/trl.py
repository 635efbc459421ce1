"""TRL adapters: an `environment_factory` class for GRPOTrainer whose tool methods are the server's
tools, a reward function scoring whole transcripts through /v1/score, and the prompt dataset.

    from ehrgym.trl import environment, prompt_dataset, score_reward
    env_cls = environment("http://127.0.0.1:8000")
    trainer = GRPOTrainer(model=..., train_dataset=prompt_dataset("http://127.0.0.1:8000"),
                          environment_factory=env_cls, reward_funcs=[], args=GRPOConfig(...))
"""

from __future__ import annotations

import inspect
import json
import keyword
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Union

from .client import Client
from .errors import EhrGymError
from .messages import to_server_messages
from .results import Message, Reset, Tool, reward_of

_SCALARS: Dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None), "object": dict, "array": list}


def python_type(schema: Dict[str, Any]) -> Any:
    """The Python type hint for a JSON Schema, as transformers' get_json_schema reads it back."""
    if "const" in schema:
        return Literal[schema["const"]]  # type: ignore[misc]
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return Union[tuple(python_type(s) for s in alternatives)]  # type: ignore[misc]
    kind = schema.get("type")
    if isinstance(kind, list):
        return Union[tuple(python_type({**schema, "type": k}) for k in kind)]  # type: ignore[misc]
    if kind == "array":
        items = schema.get("items")
        return List[python_type(items)] if isinstance(items, dict) and items else list  # type: ignore[misc]
    if kind == "object":
        return Dict[str, Any]
    return _SCALARS.get(kind, Any) if kind else Any


def _docstring(tool: Dict[str, Any]) -> str:
    fn = tool["function"]
    params = fn.get("parameters", {}).get("properties", {})
    lines = [(fn.get("description") or fn["name"]).strip(), "", "Args:"]
    for name, schema in params.items():
        desc = " ".join(str(schema.get("description") or name.replace("_", " ")).split())
        lines.append(f"    {name}: {desc}")
    return "\n".join(lines) if params else lines[0]


def _tool_method(tool: Tool) -> Callable[..., str]:
    """A method named after the tool, typed and documented from its JSON Schema, that plays the call."""
    fn = tool["function"]
    name = fn["name"]
    schema = fn.get("parameters", {})
    required = set(schema.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: Dict[str, Any] = {"return": str}
    props = schema.get("properties", {})
    for pname in sorted(props, key=lambda p: p not in required):
        if not pname.isidentifier() or keyword.iskeyword(pname):
            raise ValueError(f"tool {name}: parameter {pname!r} is not a Python identifier")
        hint = python_type(props[pname])
        if pname in required:
            params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint))
        else:
            hint = Optional[hint]
            params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint, default=None))
        annotations[pname] = hint

    def method(self: "EhrGymEnvironment", **arguments: Any) -> str:
        # A required parameter that may be null is sent as null (MedAgentBench V2's patient search requires all four fields).
        return self._call(name, {k: v for k, v in arguments.items() if v is not None or k in required})

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _docstring(tool)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return method


class EhrGymEnvironment:
    """Base of the classes `environment()` makes: one ehrgym episode per rollout.

    `reset(**row)` opens an episode for the row's `task_id` (closing the previous one), each tool
    method sends one assistant tool call and returns the server's tool reply, and `get_reward()`
    returns the episode's reward and deletes the episode on the server."""

    base_url: str = "http://127.0.0.1:8000"
    token: Optional[str] = None
    max_rounds: Optional[int] = None
    tool_names: Sequence[str] = ()
    #: "binary" (the verdict) or "partial_credit" (the passed fraction of checks / workflows checkpoints).
    reward_kind: str = "binary"

    def __init__(self) -> None:
        self.client = Client(self.base_url, token=self.token)
        self.episode_id: Optional[str] = None
        self.task_id: Optional[str] = None
        self.messages: List[Message] = []
        self.reward = 0.0
        self.done = False
        self._calls = 0

    def reset(self, **row: Any) -> Optional[str]:
        self._close()
        task_id = row.get("task_id")
        if not isinstance(task_id, str):
            raise ValueError(f"task_id: each dataset row needs a task_id string, got {task_id!r}")
        created = self.client.create_episode(task_id=task_id, protocol="tools", max_rounds=self.max_rounds)
        self.episode_id, self.task_id = created.episode_id, task_id
        got = [t["function"]["name"] for t in created.tools or []]
        if got != list(self.tool_names):
            self._close()
            raise ValueError(f"tools: task {task_id} offers {got}, not the {list(self.tool_names)} this class was made with")
        self.messages = list(created.observation)
        self.reward, self.done, self._calls = 0.0, False, 0
        return None  # the prompt (prompt_dataset) already holds the episode's first messages

    def _call(self, name: str, arguments: Dict[str, Any]) -> str:
        if self.done:
            return "The episode has ended; no further tool calls are run."
        if self.episode_id is None:
            raise RuntimeError("call reset(task_id=...) before a tool")
        call = {"id": f"call_{self._calls}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        self._calls += 1
        message: Message = {"role": "assistant", "content": None, "tool_calls": [call]}
        result = self.client.step(self.episode_id, message)
        self.messages.append(message)
        self.messages.extend(result.observation)
        self.reward, self.done = reward_of(result.reward, result.info, self.reward_kind), result.done
        replies = [m.get("content") or "" for m in result.observation if m.get("role") == "tool"]
        answer = replies or [m.get("content") or "" for m in result.observation]
        # A call that ends the run (invalid arguments, unknown tool, a failed finish) has no tool reply:
        # the step's info.error says which call failed, why, and that the run ended.
        error = result.info.get("error")
        if isinstance(error, str) and error:
            answer = [*answer, error]
        return "\n".join(a for a in answer if a)

    def get_reward(self) -> float:
        reward = self.reward
        self._close()
        return reward

    def _close(self) -> None:
        if self.episode_id is not None:
            episode_id, self.episode_id = self.episode_id, None
            try:
                self.client.delete_episode(episode_id)
            except EhrGymError:
                pass


def server_tools(client: Client, task_id: Optional[str] = None) -> List[Tool]:
    """The tools the server gives a tool-protocol episode (of `task_id`, or of its first task)."""
    if task_id is None:
        task_id = client.tasks(limit=1).tasks[0].id
    with client.episode(task_id=task_id, protocol="tools") as ep:
        return list(ep.tools or [])


def environment(base_url: str, token: Optional[str] = None, max_rounds: Optional[int] = None, task_id: Optional[str] = None, name: str = "EhrGymEnv", reward: str = "binary") -> type:
    """A GRPOTrainer `environment_factory` class whose public methods are the server's tools; `get_reward()`
    returns the `reward` ("binary" or "partial_credit")."""
    reward_of(0.0, {}, reward)
    with Client(base_url, token=token) as client:
        tools = server_tools(client, task_id)
    namespace: Dict[str, Any] = {"base_url": base_url, "token": token, "max_rounds": max_rounds, "reward_kind": reward, "tool_names": tuple(t["function"]["name"] for t in tools), "__module__": __name__}
    for tool in tools:
        namespace[tool["function"]["name"]] = _tool_method(tool)
    return type(name, (EhrGymEnvironment,), namespace)


def selected_task_ids(path: str) -> List[str]:
    """The task ids of a task file, e.g. the curriculum `ehrgym tasks select --out FILE` writes (one task
    object per line; an official JSON array works too)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().startswith("["):
        items = json.loads(text)
    else:
        items = [json.loads(line) for line in text.splitlines() if line.strip()]
    ids = [t.get("id") for t in items if isinstance(t, dict)]
    if len(ids) != len(items) or not all(isinstance(i, str) and i for i in ids):
        raise ValueError(f"{path}: expected task objects with an `id`, one per line (the file `ehrgym tasks select` writes)")
    return ids


def prompt_dataset(base_url: str, token: Optional[str] = None, suite: Optional[str] = None, type: Optional[str] = None, limit: Optional[int] = None, tasks: Optional[str] = None) -> Any:
    """A `datasets.Dataset` of {prompt: the episode's first messages, task_id} for the server's tasks.
    `tasks`: a task file (the GRPO curriculum of `ehrgym tasks select`): only its tasks, which the server
    must serve (`ehrgym serve --tasks` that file, or the file it was selected from)."""
    from datasets import Dataset

    wanted = selected_task_ids(tasks) if tasks is not None else None
    rows: List[Dict[str, Any]] = []
    with Client(base_url, token=token) as client:
        served = client.tasks(suite=suite, type=type, limit=None if wanted is not None else limit).tasks
        if wanted is not None:
            ids = {t.id for t in served}
            missing = [i for i in wanted if i not in ids]
            if missing:
                raise ValueError(f"{tasks}: {len(missing)} of its tasks are not served by {base_url}{' with this suite/type' if suite or type else ''} (e.g. {missing[0]!r}): start the server with --tasks {tasks}")
            keep = set(wanted)
            served = [t for t in served if t.id in keep][:limit]
        for task in served:
            created: Reset = client.create_episode(task_id=task.id, protocol="tools")
            client.delete_episode(created.episode_id)
            rows.append({"prompt": created.observation, "task_id": task.id})
    return Dataset.from_list(rows)


def score_reward(base_url: str, token: Optional[str] = None, protocol: str = "tools", max_rounds: Optional[int] = None, reward: str = "binary") -> Callable[..., List[float]]:
    """A GRPOTrainer reward function: each (prompt + completion) transcript replayed by /v1/score, scored by
    `reward` ("binary" or "partial_credit")."""
    reward_of(0.0, {}, reward)
    client = Client(base_url, token=token)

    def ehrgym_score(prompts: List[Any], completions: List[Any], task_id: List[str], **_: Any) -> List[float]:
        rewards = []
        for prompt, completion, tid in zip(prompts, completions, task_id):
            turns = completion if isinstance(completion, list) else [{"role": "assistant", "content": completion}]
            head = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            scored = client.score(to_server_messages([*head, *turns]), task_id=tid, protocol=protocol, max_rounds=max_rounds)
            rewards.append(reward_of(scored.reward, scored.info, reward))
        return rewards

    return ehrgym_score
