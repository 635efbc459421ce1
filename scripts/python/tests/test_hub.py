"""A dataset round trip through a Hub: `ehrgym dataset push` uploads a built dataset to the project's
local test Hub (test/datasets/hub-server.ts, a child process on loopback), then the real
huggingface_hub client downloads it (snapshot_download, hf_hub_download) and `datasets.load_dataset`
reads it by repo id, each in a child Python process whose HF_ENDPOINT is that Hub and whose caches
start empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from datasets import Features, Json, List, load_dataset

from conftest import CLI, ROOT, ChildServer, build_expert_dataset
from test_datasets import jsonl_rows, same

HF_TOKEN = "hf_py_hub_token"
REPO = "alice/ehr-roundtrip"

DOWNLOAD = """
import json, sys
from huggingface_hub import hf_hub_download, snapshot_download
snapshot = snapshot_download(sys.argv[2], repo_type="dataset")
card = hf_hub_download(sys.argv[2], "README.md", repo_type="dataset", revision=sys.argv[3])
json.dump({"snapshot": snapshot, "card": card}, open(sys.argv[1], "w"))
"""

LOAD = """
import json, sys
from datasets import load_dataset
loaded = load_dataset(sys.argv[2])
json.dump({split: {"features": data.features.to_dict(), "rows": data.to_list()} for split, data in loaded.items()}, open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="module")
def hub() -> Iterator[ChildServer]:
    child = ChildServer([HF_TOKEN], command=[os.environ.get("EHRGYM_NODE", "node"), "--import", "tsx", str(ROOT / "test" / "datasets" / "hub-server.ts")])
    yield child
    child.stop()


def python(script: str, tmp: Path, name: str, hub: ChildServer, *args: str) -> Dict[str, Any]:
    """Runs `script` in a fresh Python with empty Hugging Face caches, online against `hub` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_TOKEN=HF_TOKEN, HF_HOME=str(tmp / f"home-{name}"), HF_HUB_OFFLINE="0", HF_HUB_DISABLE_TELEMETRY="1", NO_PROXY="127.0.0.1,localhost")
    out = tmp / f"{name}.json"
    r = subprocess.run([sys.executable, "-c", script, str(out), *args], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(out.read_text())


def files_under(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def requests(hub: ChildServer) -> list[Dict[str, Any]]:
    """Every request the Hub has answered so far: a marker request is sent, and the log is read up to it
    (the log lines arrive through a pipe, after the replies)."""
    marker = f"/marker-{len(hub.lines)}"
    try:
        urllib.request.urlopen(hub.url + marker)
    except urllib.error.HTTPError as err:
        assert err.code == 401
    while True:
        seen = [json.loads(line) for line in list(hub.lines)]
        paths = [q["path"] for q in seen]
        if marker in paths:
            return [q for q in seen[: paths.index(marker)] if not q["path"].startswith("/marker-")]
        assert hub.proc.poll() is None, "the Hub stopped"
        time.sleep(0.05)


def test_pushed_dataset_downloads_with_huggingface_hub_and_loads_with_datasets(hub: ChildServer, tmp_path: Path) -> None:
    ds = build_expert_dataset(tmp_path, ["text", "tools"], "--split-fractions", "0.5,0.5", "--splits", "train,test")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    pushed = subprocess.run(CLI + ["dataset", "push", str(ds), "--repo", REPO, "--hub-url", hub.url], cwd=ROOT, env={**env, "HF_TOKEN": HF_TOKEN, "HF_HOME": str(tmp_path / "push-home")}, capture_output=True, text=True)
    assert pushed.returncode == 0, pushed.stderr
    commit = pushed.stdout.split(" in commit ")[1].split()[0]
    assert len(commit) == 40

    # huggingface_hub: every file, byte for byte, at the pushed commit
    got = python(DOWNLOAD, tmp_path, "download", hub, REPO, commit)
    snapshot = Path(got["snapshot"])
    assert snapshot.name == commit
    local = files_under(ds)
    assert files_under(snapshot) == local and len(local) > 4
    assert Path(got["card"]).read_bytes() == (ds / "README.md").read_bytes()
    seen = requests(hub)
    lfs = [q for q in seen if q["path"].startswith("/lfs-files/")]
    # the large files came the way the Hub serves LFS: a redirect from resolve/, then the bytes from the
    # storage origin without the token
    assert lfs and all(q["method"] == "GET" and q["status"] == 200 and not q["auth"] for q in lfs)
    assert any(q["method"] == "HEAD" and "/resolve/" in q["path"] and q["status"] == 302 for q in seen)
    assert any(q["method"] == "GET" and "/resolve/" in q["path"] and q["status"] == 200 for q in seen)

    # datasets: load_dataset by repo id, every split of the card's default config, rows equal the local build's
    before = len(seen)
    loaded = python(LOAD, tmp_path, "load", hub, REPO)
    assert sorted(loaded) == ["test", "train"]
    for split, data in loaded.items():
        features = Features.from_dict(data["features"])
        assert features == load_dataset(str(ds), split=split).features
        assert features["messages"] == List(Json()) and features["tools"] == Json()
        expected = jsonl_rows(ds, split)
        assert len(data["rows"]) == len(expected) > 0
        for row, want in zip(data["rows"], expected):
            assert same(row, want), row["id"]
    # read from the Hub (its own empty cache), not from the download above
    assert any(q["path"].startswith("/lfs-files/") for q in requests(hub)[before:])
    assert all(q["status"] in (200, 302, 404) for q in requests(hub)), "the Hub refused a request"
