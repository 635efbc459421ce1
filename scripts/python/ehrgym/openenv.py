"""OpenEnv: a typed client of ehrgym's OpenEnv session (`/ws`, one episode per connection).

    from ehrgym.openenv import EhrGymAction, EhrGymEnvClient
    with EhrGymEnvClient("http://127.0.0.1:8000").sync() as env:
        result = env.reset(task_id="mab-v1/task1/7-1")
        result = env.step(EhrGymAction(content='FINISH(["S6534835"])'))
        print(result.reward, result.done)
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field
from websockets.asyncio.client import connect as ws_connect


class EhrGymAction(Action):
    """The assistant's turn: text protocol `content` (GET/POST/FINISH); tool protocol `tool_calls`."""

    content: Optional[str] = None
    tool_calls: Optional[List[Dict[str, Any]]] = None


class EhrGymObservation(Observation):
    episode_id: Optional[str] = Field(None, description="None from an HTTP /reset without an episode_id: that episode is not kept")
    task_id: str
    messages: List[Dict[str, Any]] = Field(default_factory=list, description="The new chat messages")
    tools: Optional[List[Dict[str, Any]]] = None
    info: Dict[str, Any] = Field(default_factory=dict)


class EhrGymState(State):
    task_id: Optional[str] = None
    protocol: Optional[str] = None
    done: bool = False
    info: Dict[str, Any] = Field(default_factory=dict)


class EhrGymEnvClient(EnvClient[EhrGymAction, EhrGymObservation, EhrGymState]):
    """OpenEnv's EnvClient for ehrgym; `token` (default $EHRGYM_TOKEN) is sent as a bearer token."""

    def __init__(self, base_url: str, token: Optional[str] = None, **kwargs: Any):
        super().__init__(base_url, **kwargs)
        self._token = token if token is not None else os.environ.get("EHRGYM_TOKEN")

    async def connect(self) -> "EhrGymEnvClient":
        if self._ws is None:
            headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
            try:
                self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size, additional_headers=headers, proxy=None)
            except Exception as e:
                raise ConnectionError(f"Failed to connect to {self._ws_url}: {e}") from e
        return self

    def _step_payload(self, action: EhrGymAction) -> Dict[str, Any]:
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[EhrGymObservation]:
        reward, done = payload.get("reward"), bool(payload.get("done", False))
        observation = EhrGymObservation(**payload["observation"], reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: Dict[str, Any]) -> EhrGymState:
        return EhrGymState(**payload)
