"""Routable episodes from the Python client: chosen ids, X-Episode-Id, unknown_episode, re-open on retry."""

from __future__ import annotations

import json

import pytest

from ehrgym import Client, EpisodeLostError, NotFoundError


def _task(client: Client):
    # task1 (find a patient's MRN) is answered in full by FINISH(sol).
    return next(t for t in client.tasks(type="task1").tasks if t.raw.get("sol"))


def test_the_client_chooses_ids_and_the_server_names_its_replica(client: Client) -> None:
    task = _task(client)
    with client.episode(task_id=task.id) as ep:
        assert ep.id.startswith("ep-") and len(ep.id) == 35
        state = client.get_episode(ep.id)
        assert state.episode_id == ep.id
    chosen = client.create_episode(task_id=task.id, episode_id="trainer3:g17")
    assert chosen.episode_id == "trainer3:g17"
    raw = client._http.get("/healthz")
    assert raw.headers["x-ehrgym-replica"] == "r0"
    client.delete_episode("trainer3:g17")


def test_a_lost_episode_is_unknown_episode_and_reopen_replays_it(client: Client) -> None:
    task = _task(client)
    answer = f"FINISH({json.dumps(task.raw['sol'])})"
    probe = "GET http://localhost:8080/fhir/Patient?name=x"

    plain = client.episode(task_id=task.id)
    plain.step(probe)
    client.delete_episode(plain.id)  # as if its replica had gone
    with pytest.raises(EpisodeLostError) as lost:
        plain.step(answer)
    assert isinstance(lost.value, NotFoundError)  # what code written before EpisodeLostError catches
    assert (lost.value.status, lost.value.code, lost.value.episode_id) == (404, "unknown_episode", plain.id)
    assert f"episode {plain.id} not found" in str(lost.value)

    with client.episode(task_id=task.id, reopen=True) as ep:
        ep.step(probe)
        client.delete_episode(ep.id)
        result = ep.step(answer)
        assert ep.reopened == 1
        state = client.get_episode(ep.id)
        # The replay re-ran the first turn: the server's episode has both steps, and the reward.
        assert (state.steps, result.reward, result.done) == (2, 1.0, True)
