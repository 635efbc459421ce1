"""Typed replies of the reward server (each keeps the decoded reply as `raw`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

Message = Dict[str, Any]
"""A chat message: {role, content, tool_calls?, tool_call_id?, ...}."""
Tool = Dict[str, Any]
"""An OpenAI-style tool: {type: "function", function: {name, description, parameters}}."""


@dataclass(frozen=True)
class Task:
    id: str
    suite: str
    type: str
    instruction: str
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "Task":
        return cls(id=d["id"], suite=d.get("suite", ""), type=d.get("type", ""), instruction=d.get("instruction", ""), raw=d)


@dataclass(frozen=True)
class TaskPage:
    total: int
    offset: int
    tasks: List[Task]

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "TaskPage":
        return cls(total=d["total"], offset=d["offset"], tasks=[Task.parse(t) for t in d["tasks"]])


@dataclass(frozen=True)
class Health:
    ok: bool
    replica_id: str
    episodes_open: int
    episodes_retained: int
    tasks: int
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "Health":
        return cls(ok=bool(d["ok"]), replica_id=d.get("replica_id", ""), episodes_open=d.get("episodes_open", 0), episodes_retained=d.get("episodes_retained", 0), tasks=d.get("tasks", 0), raw=d)


@dataclass(frozen=True)
class Reset:
    """POST /v1/episodes: the new episode's id, its first messages and (tool protocol) its tools."""

    episode_id: str
    observation: List[Message]
    tools: Optional[List[Tool]]
    info: Dict[str, Any]

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "Reset":
        return cls(episode_id=d["episode_id"], observation=d["observation"], tools=d.get("tools"), info=d.get("info") or {})


@dataclass(frozen=True)
class StepResult:
    observation: List[Message]
    reward: float
    terminated: bool
    truncated: bool
    info: Dict[str, Any]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "StepResult":
        return cls(observation=d["observation"], reward=float(d["reward"]), terminated=bool(d["terminated"]), truncated=bool(d["truncated"]), info=d.get("info") or {})


@dataclass(frozen=True)
class EpisodeState:
    episode_id: str
    task_id: str
    protocol: str
    steps: int
    done: bool
    info: Dict[str, Any]
    messages: Optional[List[Message]]

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "EpisodeState":
        return cls(episode_id=d["episode_id"], task_id=d["task_id"], protocol=d["protocol"], steps=d["steps"], done=bool(d["done"]), info=d.get("info") or {}, messages=d.get("messages"))


@dataclass(frozen=True)
class ScoreResult:
    reward: float
    terminated: bool
    truncated: bool
    info: Dict[str, Any]
    replayed_turns: int
    ignored_turns: int
    messages: Optional[List[Message]]

    @classmethod
    def parse(cls, d: Dict[str, Any]) -> "ScoreResult":
        return cls(
            reward=float(d["reward"]),
            terminated=bool(d["terminated"]),
            truncated=bool(d["truncated"]),
            info=d.get("info") or {},
            replayed_turns=d["replayed_turns"],
            ignored_turns=d["ignored_turns"],
            messages=d.get("messages"),
        )


REWARDS = ("binary", "partial_credit")


def reward_of(reward: float, info: Dict[str, Any], kind: str = "binary") -> float:
    """The episode's reward of `kind`: the binary verdict, or `partial_credit` (the passed fraction of the
    grader's checks; for a `workflows` review, of its checkpoints), 0.0 while the episode is not graded."""
    if kind == "binary":
        return reward
    if kind == "partial_credit":
        value = info.get("partialCredit")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    raise ValueError(f"reward: expected one of {', '.join(REWARDS)}, got {kind!r}")
