"""Where benchmark data and caches live."""

from __future__ import annotations

import os
from pathlib import Path


def repository_root() -> Path | None:
    """The ragdial checkout this module runs from (the folder with its ``pyproject.toml``), or None when ragdial is
    installed as a package rather than run from a checkout."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "ragdial").is_dir() else None


def data_root() -> Path:
    """The shared benchmark data folder: ``$RAGDIAL_DATA``, or ``../shared/data`` beside the repository.

    An unset **or empty** ``RAGDIAL_DATA`` means the default, which is resolved from the repository root (not the
    current directory), so the same data is found from any working directory; outside a checkout (an installed
    wheel) the default is ``../shared/data`` relative to the current directory. A relative ``RAGDIAL_DATA`` is taken
    relative to the current directory, as any path a user types.
    """
    value = os.environ.get("RAGDIAL_DATA", "").strip()
    if value:
        return Path(value).expanduser()
    root = repository_root()
    return (root.parent if root is not None else Path.cwd().parent) / "shared" / "data"


def cache_dir() -> Path:
    """Cache for derived artefacts (joined model files, embeddings): ``$RAGDIAL_CACHE`` or ``~/.cache/ragdial``."""
    root = os.environ.get("RAGDIAL_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ragdial"
    path = Path(root).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path
