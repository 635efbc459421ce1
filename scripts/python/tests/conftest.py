"""Shared fixtures: every test runs offline with its own Hugging Face caches (nothing read from or
written to ~/.cache); a real `ehrgym serve` child process on loopback; the package's clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_hf_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    home: Path = tmp_path_factory.mktemp("hf-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HOME", str(home))
    mp.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets.config

    mp.setattr(datasets.config, "HF_DATASETS_CACHE", home / "datasets")
    mp.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


ROOT = Path(__file__).resolve().parents[3]
CLI = [os.environ.get("EHRGYM_NODE", "node"), str(ROOT / "bin" / "ehrgym.js")]
# A small synthetic population: every task type, quick to load.
SERVE_ARGS = ["--patients", "20", "--per-type", "2", "--seed", "7"]
TOKEN = "py-token"


def build_expert_dataset(tmp: Path, protocols: List[str], *build_args: str) -> Path:
    """`ehrgym eval` of the scripted expert on a small synthetic EHR, per protocol, then `dataset build` of the rows."""
    rows = []
    for protocol in protocols:
        out = tmp / f"{protocol}.jsonl"
        subprocess.run(CLI + ["eval", "--policy", "expert", "--synthetic", "--seed", "3", "--patients", "8", "--per-type", "1", "--protocol", protocol, "--out", str(out), "--no-progress"], cwd=ROOT, check=True, capture_output=True, text=True)
        rows.append(str(out))
    ds = tmp / "ds"
    subprocess.run(CLI + ["dataset", "build", "--from", *rows, "--out", str(ds), *build_args], cwd=ROOT, check=True, capture_output=True, text=True)
    return ds


def ts_batch(script: Path, requests: List[Any]) -> List[Dict[str, Any]]:
    """One answer per request from a TypeScript batch script (test/**/*.ts, run with tsx): JSON lines in, JSON
    lines out, in order (the differential tests against CPython, pydantic and transformers use it)."""
    node = os.environ.get("EHRGYM_NODE", "node")
    out = subprocess.run([node, "--import", "tsx", str(script)], cwd=ROOT, input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines() if line]
    assert len(answers) == len(requests)
    return answers


class ChildServer:
    """A server started with `--port 0` (the CLI unless `command` says otherwise); its first stdout line
    is JSON with the url, the later ones are kept in `lines`."""

    def __init__(self, args: List[str], command: List[str] = CLI):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(command + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError(f"{' '.join(args)} exited before printing its url: {self.log.read()}")
        self.hello = json.loads(line)
        self.url: str = self.hello["url"]
        self.lines: List[str] = []
        # drained as it comes, so a chatty child never blocks on a full pipe
        threading.Thread(target=lambda out: self.lines.extend(out), args=(self.proc.stdout,), daemon=True).start()

    def stop(self) -> None:
        stop_group(self.proc)


def stop_group(proc: "subprocess.Popen[str]") -> None:
    """Stops a child started with start_new_session: SIGTERM to its process group, SIGKILL if it lingers."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def start(args: List[str]) -> ChildServer:
    return ChildServer(args)


@pytest.fixture(scope="session")
def server() -> Iterator[ChildServer]:
    """`ehrgym serve` with a bearer token (the tests' clients pass it)."""
    child = start(["serve", "--port", "0", "--token", TOKEN, *SERVE_ARGS])
    yield child
    child.stop()


@pytest.fixture()
def client(server: ChildServer):
    from ehrgym import Client

    with Client(server.url, token=TOKEN) as c:
        yield c
