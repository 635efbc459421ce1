"""deploy/nginx with the real nginx on loopback: 3 replicas, 1,000 concurrent episodes from the Python
client, every step served by the replica that holds the episode, rewards equal to a direct run, and
a replica killed mid-run losing only its own episodes; a replica killed while it holds a step reads
as EpisodeLostError in the Python client (or is re-opened elsewhere); OpenEnv's /ws session through
the proxy."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import httpx
import pytest

from conftest import ROOT, SERVE_ARGS, ChildServer, start
from ehrgym import AsyncClient, Client, EhrGymError, EpisodeLostError

EPISODES = 1000
DEPLOY = ROOT / "deploy" / "nginx"
PROBE = "GET http://localhost:8080/fhir/Patient?name=Smith"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render(conf: str, listen: int, replicas: List[str]) -> str:
    """deploy/nginx/ehrgym.conf with this test's ports: its upstream servers and listen port replaced."""
    servers = re.findall(r"^ *server 127\.0\.0\.1:\d+ (.*);$", conf, flags=re.M)
    assert len(servers) == 3, "ehrgym.conf lists 3 local replicas"
    body = re.sub(r"^ *server 127\.0\.0\.1:\d+ .*;\n", "", conf, flags=re.M)
    lines = "".join(f"    server {u.removeprefix('http://')} {servers[0]};\n" for u in replicas)
    body = body.replace("    keepalive 64;", lines + "    keepalive 64;")
    return re.sub(r"listen 8000;", f"listen 127.0.0.1:{listen};", body)


class Nginx:
    """The real nginx, non-daemon, with its prefix (pid, temp files) in a temp dir."""

    def __init__(self, replicas: List[str]):
        exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        if exe is None:
            if os.environ.get("CI"):
                pytest.fail("nginx is not installed (.ci/run installs Debian's nginx-light)")
            pytest.skip("nginx is not installed (apt-get install nginx-light)")
        self.dir = Path(tempfile.mkdtemp(prefix="ehrgym-nginx-"))
        self.port = _free_port()
        (self.dir / "ehrgym.conf").write_text(render((DEPLOY / "ehrgym.conf").read_text(), self.port, replicas))
        main = (DEPLOY / "nginx.conf").read_text()
        if os.geteuid() == 0:
            main = "user root;\n" + main  # workers may read the temp dir the test made
        (self.dir / "nginx.conf").write_text(main)
        self.log = open(self.dir / "stderr.log", "w+")
        self.proc = subprocess.Popen([exe, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), "-g", "daemon off;"], stderr=self.log, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        while True:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None:
                    self.log.seek(0)
                    raise RuntimeError(f"nginx did not start: {self.log.read()}")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _cluster(names: Tuple[str, ...]) -> Iterator[Tuple[Dict[str, ChildServer], Nginx]]:
    replicas = {name: start(["serve", "--port", "0", "--replica-id", name, "--max-episodes", "4096", *SERVE_ARGS]) for name in names}
    proxy: Optional[Nginx] = None
    try:
        proxy = Nginx([r.url for r in replicas.values()])
        yield replicas, proxy
    finally:
        if proxy:
            proxy.stop()
        for r in replicas.values():
            r.stop()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Tuple[Dict[str, ChildServer], Nginx]]:
    yield from _cluster(("ra", "rb", "rc"))


@pytest.fixture(scope="module")
def doomed() -> Iterator[Tuple[Dict[str, ChildServer], Nginx]]:
    """Replicas the tests below kill one by one (the 1,000-episode test keeps its own)."""
    yield from _cluster(("la", "lb", "lc"))


class Seen:
    """Records which replica answered each request about each episode (X-Ehrgym-Replica)."""

    def __init__(self) -> None:
        self.by_episode: Dict[str, List[str]] = {}

    async def hook(self, response: httpx.Response) -> None:
        episode = response.request.headers.get("x-episode-id")
        replica = response.headers.get("x-ehrgym-replica")
        if episode and replica:
            self.by_episode.setdefault(episode, []).append(replica)


def _plan(tasks: List[dict]) -> List[Tuple[str, List[str]]]:
    """Episode i: a task and its two turns, right answers for half of them."""
    plan = []
    for i in range(EPISODES):
        task = tasks[i % len(tasks)]
        answer = task.get("sol") if i % 2 == 0 and task.get("sol") is not None else ["wrong"]
        plan.append((task["id"], [PROBE, f"FINISH({json.dumps(answer)})"]))
    return plan


async def _run(url: str, plan: List[Tuple[str, List[str]]], prefix: str, between=None) -> Tuple[Dict[str, object], Seen]:
    """Opens every episode, plays turn 1 of all, calls `between`, then turn 2 of all; per id its reward or error."""
    seen = Seen()
    async with AsyncClient(url, format="json", retries=0) as client:
        client._http.event_hooks["response"].append(seen.hook)
        ids = [f"{prefix}-{i:04d}" for i in range(len(plan))]
        outcome: Dict[str, object] = {}

        async def play(turn: int, i: int) -> None:
            if ids[i] in outcome:
                return
            try:
                if turn < 0:
                    await client.create_episode(task_id=plan[i][0], episode_id=ids[i])
                else:
                    result = await client.step(ids[i], plan[i][1][turn])
                    if turn == len(plan[i][1]) - 1:
                        outcome[ids[i]] = result.reward
            except (EhrGymError, httpx.TransportError) as err:
                outcome[ids[i]] = err

        for turn in (-1, 0):
            await asyncio.gather(*(play(turn, i) for i in range(len(plan))))
        if between:
            between()
        await asyncio.gather(*(play(1, i) for i in range(len(plan))))
        return outcome, seen


def test_three_replicas_behind_nginx(cluster: Tuple[Dict[str, ChildServer], Nginx]) -> None:
    replicas, proxy = cluster
    tasks = [t.raw for t in _tasks(proxy.url)]
    plan = _plan(tasks)

    # The single-process reference: the same tasks and turns straight to one replica.
    direct, _ = asyncio.run(_run(replicas["ra"].url, plan, "direct"))
    assert all(isinstance(r, float) for r in direct.values()), [r for r in direct.values() if not isinstance(r, float)][:3]
    rewards = Counter(direct.values())
    assert rewards[1.0] > 0 and rewards[0.0] > 0, rewards

    # Through the proxy, all 1,000 episodes open at once; rb dies between the two turns.
    victim = replicas["rb"]
    proxied, seen = asyncio.run(_run(proxy.url, plan, "proxied", between=lambda: os.killpg(victim.proc.pid, signal.SIGKILL)))
    holder = {ep: answers[0] for ep, answers in seen.by_episode.items()}
    spread = Counter(holder.values())
    assert set(spread) == {"ra", "rb", "rc"} and min(spread.values()) > EPISODES // 10, spread

    for i in range(EPISODES):
        ep = f"proxied-{i:04d}"
        answers = seen.by_episode[ep]
        if holder[ep] != "rb":
            # Untouched: every request answered by its holder, the reward of the direct run.
            assert set(answers) == {holder[ep]}, (ep, answers)
            assert proxied[ep] == direct[f"direct-{i:04d}"], (ep, proxied[ep])
        else:
            # Lost with its replica: the step that came after the kill failed, never a new episode.
            err = proxied[ep]
            assert isinstance(err, (EhrGymError, httpx.TransportError)), (ep, err)
            if isinstance(err, EhrGymError):
                assert err.code == "unknown_episode" or err.status == 502, (ep, err.status, err.code, err.message)
            assert answers[:2] == ["rb", "rb"] and all(a != "rb" for a in answers[2:]), (ep, answers)
    lost = sum(1 for ep in holder if holder[ep] == "rb")
    assert lost == spread["rb"]


def _tasks(url: str):
    from ehrgym import Client

    with Client(url, format="json") as client:
        return client.tasks().tasks


def _holder(client: Client, episode_id: str) -> str:
    """The replica that answers about the episode (X-Ehrgym-Replica)."""
    reply = client._http.get(f"/v1/episodes/{episode_id}", headers={"X-Episode-Id": episode_id})
    reply.raise_for_status()
    return reply.headers["x-ehrgym-replica"]


def _wait_for_unread_request(port: int) -> None:
    """Until a connection to `port` on this host holds bytes its (stopped) server has not read: the
    request nginx sent it. Read from the kernel's socket table (/proc/net/tcp: rx_queue)."""
    while True:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for row in Path(table).read_text().splitlines()[1:]:
                fields = row.split()
                local, state, queues = fields[1], fields[3], fields[4]
                if int(local.rsplit(":", 1)[1], 16) == port and state == "01" and int(queues.split(":")[1], 16) > 0:
                    return
        time.sleep(0.02)


def _kill_mid_step(replica: ChildServer, step):
    """Stops the replica, starts `step` (it reaches the replica through nginx and waits), kills the
    replica while it holds the request, and returns the step's result or exception."""
    port = httpx.URL(replica.url).port
    assert port is not None
    os.kill(replica.proc.pid, signal.SIGSTOP)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(step)
        _wait_for_unread_request(port)
        os.kill(replica.proc.pid, signal.SIGKILL)
        replica.proc.wait()
        error = pending.exception()
        return error if error is not None else pending.result()


def test_openenv_websocket_episode_through_nginx(doomed: Tuple[Dict[str, ChildServer], Nginx]) -> None:
    from ehrgym.openenv import EhrGymAction, EhrGymEnvClient

    _, proxy = doomed
    task = next(t.raw for t in _tasks(proxy.url) if t.raw.get("type") == "task1" and t.raw.get("sol"))
    with EhrGymEnvClient(proxy.url).sync() as env:
        result = env.reset(task_id=task["id"])
        assert result.observation.task_id == task["id"] and not result.done
        result = env.step(EhrGymAction(content=f"FINISH({json.dumps(task['sol'])})"))
        assert (result.reward, result.done) == (1.0, True)
        assert env.state().step_count == 1


def test_a_replica_killed_mid_step_is_a_lost_episode(doomed: Tuple[Dict[str, ChildServer], Nginx]) -> None:
    replicas, proxy = doomed
    task = next(t.raw for t in _tasks(proxy.url) if t.raw.get("type") == "task1" and t.raw.get("sol"))
    answer = f"FINISH({json.dumps(task['sol'])})"
    with Client(proxy.url, format="json") as client:
        # Without reopen: the step nginx could not finish is nginx's 502, and the client says which
        # episode is lost (not nginx's HTML page).
        ep = client.episode(task_id=task["id"])
        ep.step(PROBE)
        victim = replicas[_holder(client, ep.id)]
        lost = _kill_mid_step(victim, lambda: ep.step(answer))
        assert isinstance(lost, EpisodeLostError), repr(lost)
        assert (lost.status, lost.episode_id) == (502, ep.id)
        assert str(lost).startswith(f"HTTP 502 [episode_id]: episode {ep.id} is lost: the load balancer answered 502 Bad Gateway,"), str(lost)
        assert "<" not in str(lost)
        # Its next step reaches a live replica, which does not hold it: lost as well.
        with pytest.raises(EpisodeLostError) as gone:
            ep.step(answer)
        assert (gone.value.status, gone.value.code, gone.value.episode_id) == (404, "unknown_episode", ep.id)
        ep.close()

        # With reopen: the same failure re-opens the episode on a live replica and replays its turns.
        with client.episode(task_id=task["id"], reopen=True) as again:
            again.step(PROBE)
            victim = replicas[_holder(client, again.id)]
            result = _kill_mid_step(victim, lambda: again.step(answer))
            assert not isinstance(result, BaseException), repr(result)
            assert (result.reward, result.done, again.reopened) == (1.0, True, 1)
            assert _holder(client, again.id) != victim.hello["replica_id"]
            assert client.get_episode(again.id).steps == 2
