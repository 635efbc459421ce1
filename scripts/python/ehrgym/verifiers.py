"""verifiers (v1 API): ehrgym's tasks as a taskset, an Env that plays each as an ehrgym episode
(the text protocol: the model's reply is the turn, the server's reply is the next user turn) and
records the server's reward, and a chat harness that runs in this Python (no per-run uv env).

    vf-eval ehrgym-verifiers --env.taskset.base-url http://127.0.0.1:8000 -m MODEL \\
        --client.base-url http://127.0.0.1:8001/v1 -n 4

or in Python: `env = load_environment("http://127.0.0.1:8000")`.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, List, Optional

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness, NullHarnessConfig
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE, launch_chat_program

from .client import AsyncClient, Client
from .results import reward_of


PLUGIN_ID = "ehrgym-verifiers"


class EhrGymConfig(vf.TasksetConfig):
    base_url: str = "http://127.0.0.1:8000"
    """The ehrgym reward server (`ehrgym serve`)."""
    token: Optional[str] = None
    """Its bearer token (default: $EHRGYM_TOKEN)."""
    suite: Optional[str] = None
    """Only tasks of this suite (mab-v1, mab-v2)."""
    type: Optional[str] = None
    """Only tasks of this type (task1, ...)."""
    limit: Optional[int] = None
    """At most this many tasks."""
    max_rounds: Optional[int] = None
    """Round limit per episode (default: the server's)."""


class EhrGymData(vf.TaskData):
    task_id: str
    base_url: str
    token: Optional[str] = None
    max_rounds: Optional[int] = None


class EhrGymTask(vf.Task[EhrGymData]):
    pass


class EhrGymTaskset(vf.Taskset[EhrGymTask, EhrGymConfig]):
    def load(self) -> Iterator[EhrGymTask]:
        c = self.config
        with Client(c.base_url, token=c.token) as client:
            tasks = client.tasks(suite=c.suite, type=c.type, limit=c.limit).tasks
        for task in tasks:
            data = EhrGymData(id=task.id, name=task.id, prompt=None, task_id=task.id, base_url=c.base_url, token=c.token, max_rounds=c.max_rounds)
            yield EhrGymTask(data, c.task)


class EhrGymEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The model's seat; runs as a local subprocess (the chat program needs no sandbox)."""


class EhrGymEnv(vf.Env[EhrGymEnvConfig]):
    """One ehrgym episode per rollout; the trace's reward `ehrgym_reward` is the server's."""

    async def run(self, task: Any, agents: Any) -> None:
        data: EhrGymData = task.data
        async with AsyncClient(data.base_url, token=data.token) as client:
            async with client.episode(task_id=data.task_id, protocol="text", max_rounds=data.max_rounds) as ep:
                async with agents.player.interaction(task) as interaction:
                    segment = await interaction.turn(_text(ep.observation))
                    while not segment.terminated:
                        result = await ep.step(segment.last_reply)
                        if result.done:
                            break
                        segment = await interaction.turn(_text(result.observation))
                interaction.trace.record_reward("ehrgym_reward", ep.reward)
                # The shaped reward beside it (workflows: the passed fraction of the review's checkpoints).
                interaction.trace.record_reward("ehrgym_partial_credit", reward_of(ep.reward, ep.info, "partial_credit"))


def _text(messages: List[Any]) -> str:
    return "\n\n".join(str(m.get("content") or "") for m in messages)


class EhrGymHarnessConfig(NullHarnessConfig):
    pass


class _ThisPython:
    """A runtime whose PEP 723 scripts run with this interpreter (the [verifiers] extra already
    holds the chat program's packages), so a rollout installs nothing."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(self, script: Any, env: Any = None, *, activate: bool = True) -> List[str]:
        import hashlib

        data = script.encode() if isinstance(script, str) else script
        path = f".vf-ehrgym-{hashlib.sha256(data).hexdigest()[:16]}.py"
        await self._runtime.write(path, data)
        return [sys.executable, path]


class EhrGymHarness(NullHarness):
    """The null (plain chat) harness, run with this Python."""

    async def setup(self, runtime: Any) -> None:
        return None

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: Any, data: Any, tool_interception_url: Optional[str] = None) -> Any:
        system_prompt, prompt = self.resolve_prompt(data)
        extra = [f"--tool-interception-url={tool_interception_url}"] if tool_interception_url else []
        return await launch_chat_program(CHAT_PROGRAM_SOURCE, self.config, ctx, trace, _ThisPython(runtime), endpoint, secret, mcp_urls, system_prompt, prompt, extra_args=extra)


def load_environment(base_url: str = "http://127.0.0.1:8000", **taskset: Any) -> Any:
    """The verifiers Env over an ehrgym server (taskset options: token, suite, type, limit, max_rounds)."""
    from verifiers.v1.utils.loaders import load_environment as vf_load

    config = EhrGymEnvConfig.model_validate({"taskset": {"id": PLUGIN_ID, "base_url": base_url, **taskset}})
    return vf_load(config)


__all__ = ["EhrGymTaskset", "EhrGymEnv", "EhrGymHarness", "EhrGymConfig", "EhrGymEnvConfig", "EhrGymHarnessConfig", "load_environment"]
