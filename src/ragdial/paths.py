"""Where benchmark data and caches live."""

from __future__ import annotations

import os
from pathlib import Path


def data_root() -> Path:
    """The shared benchmark data folder: ``$RAGDIAL_DATA`` or ``../shared/data``."""
    return Path(os.environ.get("RAGDIAL_DATA", "../shared/data")).expanduser()


def cache_dir() -> Path:
    """Cache for derived artefacts (joined model files, embeddings): ``$RAGDIAL_CACHE`` or ``~/.cache/ragdial``."""
    root = os.environ.get("RAGDIAL_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ragdial"
    path = Path(root).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path
