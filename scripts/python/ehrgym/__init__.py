"""ehrgym: Python client of the ehrgym reward server, with TRL, verifiers and OpenEnv adapters.

    from ehrgym import Client
    client = Client("http://127.0.0.1:8000")
    task = client.tasks(limit=1).tasks[0]
    with client.episode(task_id=task.id, protocol="tools") as ep:
        ...

Adapters import their library lazily: `ehrgym.trl`, `ehrgym.verifiers`, `ehrgym.openenv`.
"""

from .client import Action, AsyncClient, AsyncEpisode, Client, Episode
from .errors import (
    BadRequestError,
    EhrGymError,
    EpisodeFinishedError,
    EpisodeLostError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    ServerBusyError,
    ServerError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from .results import EpisodeState, Health, Message, Reset, ScoreResult, StepResult, Task, TaskPage, Tool

__all__ = [
    "Action",
    "AsyncClient",
    "AsyncEpisode",
    "BadRequestError",
    "Client",
    "EhrGymError",
    "Episode",
    "EpisodeFinishedError",
    "EpisodeLostError",
    "EpisodeState",
    "Health",
    "Message",
    "MethodNotAllowedError",
    "NotFoundError",
    "PayloadTooLargeError",
    "Reset",
    "ScoreResult",
    "ServerBusyError",
    "ServerError",
    "StepResult",
    "Task",
    "TaskPage",
    "Tool",
    "UnauthorizedError",
    "UnsupportedMediaTypeError",
]
