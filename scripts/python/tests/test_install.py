"""`pip install ./scripts/python` in a fresh virtual environment (no system site-packages), offline:
pip may read only .venv/wheelhouse/ (the package's dependencies and build backend, pinned, fetched by
scripts/python/venv.sh). The installed package is then used from that environment alone: its
metadata (version, Python floor, the four extras and what they require), the typing marker, and
its client against a real `ehrgym serve`. The extras' own dependencies (TRL, torch, ...) are not
installed here: the other tests use them from .venv/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, TOKEN, ChildServer

PACKAGE = ROOT / "scripts" / "python"
WHEELHOUSE = Path(sys.prefix) / "wheelhouse"

CHECK = """
import json, sys
from importlib import metadata
import ehrgym
from ehrgym import Client
dist = metadata.distribution("ehrgym")
with Client(sys.argv[1], token=sys.argv[2]) as client:
    health = client.health()
    tasks = client.tasks(limit=1)
print(json.dumps({
    "module": ehrgym.__file__,
    "version": dist.version,
    "requires_python": dist.metadata["Requires-Python"],
    "extras": dist.metadata.get_all("Provides-Extra"),
    "requires": dist.requires,
    "typed": [dist.locate_file(f"{m}/py.typed").is_file() for m in ("ehrgym", "ehrgym_verifiers")],
    "files": sorted(str(f) for f in dist.files if f.parts[0] in ("ehrgym", "ehrgym_verifiers")),
    "ok": health.ok,
    "tasks": tasks.total,
}))
"""


def test_pip_install_in_a_fresh_venv_offline(server: ChildServer, tmp_path: Path) -> None:
    assert (WHEELHOUSE / ".stamp").is_file(), f"{WHEELHOUSE} is missing: run bash scripts/python/venv.sh"
    # the package folder as a user has it (pip builds in the source tree: keep the repository's clean)
    source = tmp_path / "python"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")

    def imports(module: str) -> bool:
        return subprocess.run([str(python), "-c", f"import {module}"], env=env, cwd=tmp_path, capture_output=True).returncode == 0

    # a bare environment: the dependencies must come from the install
    assert not imports("httpx") and not imports("msgpack")
    r = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--find-links", str(WHEELHOUSE), str(source)], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert subprocess.run([str(python), "-m", "pip", "check"], env=env, cwd=tmp_path, capture_output=True, text=True).returncode == 0
    assert imports("httpx") and imports("msgpack") and not imports("trl")

    r = subprocess.run([str(python), "-c", CHECK, server.url, TOKEN], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout)
    assert Path(got["module"]).is_relative_to(venv)
    pyproject = (PACKAGE / "pyproject.toml").read_text()
    assert f'version = "{got["version"]}"' in pyproject and got["requires_python"] == ">=3.10"
    assert sorted(got["extras"]) == ["datasets", "openenv", "trl", "verifiers"]
    for extra, needs in {"trl": ["trl", "transformers", "torch"], "verifiers": ["verifiers", "openai"], "openenv": ["openenv-core"], "datasets": ["datasets", "huggingface_hub"]}.items():
        for name in needs:
            assert any(req.startswith(name) and f'extra == "{extra}"' in req for req in got["requires"]), (extra, name)
    assert got["typed"] == [True, True]
    assert {"ehrgym/py.typed", "ehrgym_verifiers/py.typed", "ehrgym/client.py"} <= set(got["files"])
    assert not any("tests" in f for f in got["files"])
    assert got["ok"] is True and got["tasks"] > 0
