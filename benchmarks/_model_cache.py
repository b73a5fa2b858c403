"""Trained detectors and rerankers kept between benchmark runs (``zero_shot.py kdconv --model-cache DIR``).

A model is stored under a key made of what it was trained on (the examples' ids, gold ids and last turns), the
options its trainer was called with and the source of the modules that compute its features, so a run with other
training data, options or feature code trains afresh instead of reading a stale model. Code outside those modules
(the retriever's fusion, the tokeniser) is not in the key: clear the folder after changing it.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol, TypeVar

from ragdial.schema import Example


class Saved(Protocol):
    def save(self, directory: str | Path, /) -> Path: ...


M = TypeVar("M", bound=Saved)


def fingerprint(examples: Sequence[Example], options: Sequence[object], modules: Sequence[ModuleType]) -> str:
    """A hex digest of the training examples, the trainer's options and the modules' source files."""
    digest = hashlib.sha256()
    for example in examples:
        last = example.context[-1].text if example.context else ""
        digest.update(f"{example.id}\t{','.join(example.knowledge_ids)}\t{last}\n".encode())
    digest.update(repr(list(options)).encode())
    for module in modules:
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()[:16]


def cached(
    cache: Path | None, name: str, key: str, train: Callable[[], M], load: Callable[[Path], M]
) -> tuple[M, bool]:
    """(the model saved under ``cache/name-key``, True) when there is one, else (``train()``, False), saved there
    first when ``cache`` is given. A folder that does not load is trained over."""
    if cache is None:
        return train(), False
    folder = cache / f"{name}-{key}"
    if folder.is_dir():
        try:
            return load(folder), True
        except Exception as error:  # a half-written or older folder: say so and train again
            print(f"model cache: {folder} does not load ({error}); training again", file=sys.stderr)
            shutil.rmtree(folder)
    model = train()
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save(partial)
    partial.rename(folder)
    return model, False
