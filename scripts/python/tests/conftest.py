"""Every test runs offline with its own Hugging Face caches (nothing read from or written to ~/.cache)."""

from __future__ import annotations

from pathlib import Path

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
