"""OpenEnv: `openenv validate` passes against a running `ehrgym serve`, and an episode played through
the OpenEnv client (/ws) gets the same reward as the same turns through ehrgym's own client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from conftest import TOKEN, ChildServer
from ehrgym import Client


def test_openenv_validate_passes(server: ChildServer) -> None:
    openenv = str(Path(sys.executable).parent / "openenv")
    run = subprocess.run([openenv, "validate", "--url", server.url], capture_output=True, text=True)
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["passed"], json.dumps(report["criteria"], indent=1)
    assert report["mode"] == "simulation"
    assert {c["id"] for c in report["criteria"] if c["passed"]} >= {"health_endpoint", "metadata_endpoint", "schema_endpoint", "mcp_endpoint", "mode_endpoint_consistency"}


@pytest.mark.parametrize("right", [True, False])
def test_openenv_episode_reward_equals_ehrgym_client(server: ChildServer, client: Client, right: bool) -> None:
    from ehrgym.openenv import EhrGymAction, EhrGymEnvClient

    task = next(t.raw for t in client.tasks(type="task1").tasks if t.raw.get("branch") == "found")
    answer = task["sol"] if right else ["S0000000"]
    turns: List[str] = [f"GET http://localhost:8080/fhir/Patient?identifier={task['sol'][0]}", f"FINISH({json.dumps(answer)})"]

    def kept() -> int:
        health = client.health()
        return health.episodes_open + health.episodes_retained

    before = kept()
    with EhrGymEnvClient(server.url, token=TOKEN).sync() as env:
        result = env.reset(task_id=task["id"])
        assert result.observation.task_id == task["id"] and not result.done
        assert result.observation.messages[-1]["role"] == "user"
        for turn in turns:
            result = env.step(EhrGymAction(content=turn))
        state = env.state()
        assert (state.step_count, state.done, state.task_id) == (2, True, task["id"])
        assert kept() == before + 1
    openenv_reward = result.reward

    with client.episode(task_id=task["id"]) as ep:
        for turn in turns:
            ep.step(turn)
    assert openenv_reward == ep.reward == (1.0 if right else 0.0)
    assert kept() == before  # closing the OpenEnv session deleted its episode


@pytest.mark.parametrize("chosen", [None, "openenv-http-1"])
def test_openenv_http_reset_parses_with_or_without_an_episode_id(server: ChildServer, client: Client, chosen: Optional[str]) -> None:
    """OpenEnv's sessionless HTTP /reset: without an episode_id the episode is not kept and its id is null."""
    import httpx

    from ehrgym.openenv import EhrGymEnvClient

    task = client.tasks(type="task1").tasks[0].raw
    body = {"task_id": task["id"], **({"episode_id": chosen} if chosen else {})}
    reply = httpx.post(f"{server.url}/reset", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200, reply.text
    result = EhrGymEnvClient(server.url, token=TOKEN)._parse_result(reply.json())
    assert (result.observation.episode_id, result.observation.task_id, result.done) == (chosen, task["id"], False)
    if chosen:
        state = httpx.get(f"{server.url}/state", params={"episode_id": chosen}, headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert state["episode_id"] == chosen
        client.delete_episode(chosen)
