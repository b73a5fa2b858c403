"""One loader per format family, behind one registry: ``load(FORMAT, PATH, split=...)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

from ragdial.errors import OptionError, RagdialError
from ragdial.schema import Dataset


class FileOptions(TypedDict, total=False):
    """The loaders' keyword options that name files or choose what is read (``Format.options`` says which a
    format takes); ``LoadOptions`` adds the language."""

    knowledge: str | Path | None  # dstc9/dstc11: knowledge.json elsewhere than the data root
    kb_path: str | Path | None  # kdconv/huawei: the knowledge file
    targets: str  # kdconv/huawei: "system" or "all" turns as examples
    global_kb: str | Path | None  # mobilecs2
    faq: str | Path | None
    rules: str
    qa_dialogs: str | Sequence[str | Path] | None


class LoadOptions(FileOptions, total=False):
    language: str | None  # mobilecs2: "zh"/"en" (detected when not given)


@dataclass(frozen=True)
class Format:
    """A registered data format: how to load it and what its path names."""

    name: str
    loader: Callable[..., Dataset]
    path_help: str
    default_split: str | None = None
    options: tuple[str, ...] = ()  # keyword options the loader accepts


def _dstc(path: str | Path, split: str | None = None, **options: Unpack[LoadOptions]) -> Dataset:
    from ragdial.datasets import dstc

    return dstc.load(path, split or "val", options.get("knowledge"))


def _kdconv(path: str | Path, split: str | None = None, **options: Unpack[LoadOptions]) -> Dataset:
    from ragdial.datasets import kdconv

    path = Path(path)
    if path.is_dir():  # a KdConv domain folder: dev.json (or the split named) and kb_<domain>.json if present
        kb = next(iter(sorted(path.glob("kb_*.json"))), None)
        options.setdefault("kb_path", kb)
        path = path / f"{split or 'dev'}.json"
    return kdconv.load(path, options.get("kb_path"), options.get("targets", "system"), split or "")


def _smp2017(path: str | Path, split: str | None = None, **options: Unpack[LoadOptions]) -> Dataset:
    from ragdial.datasets import smp2017

    return smp2017.load(path, split or "train")


def _mobilecs2(path: str | Path, split: str | None = None, **options: Unpack[LoadOptions]) -> Dataset:
    from ragdial.datasets import mobilecs2

    return mobilecs2.load(
        path,
        split,
        options.get("global_kb"),
        options.get("faq"),
        options.get("language"),
        options.get("rules", "organisers"),
        options.get("qa_dialogs"),
    )


DSTC_PATH = "data root with knowledge.json and <split>/logs.json, labels.json"
MOBILECS2_PATH = "a MobileCS2 dialogs JSON file or folder (global_kb.json and qa.json beside it)"
KDCONV_PATH = "a KdConv domain folder (dev.json, kb_<domain>.json) or a dialogs JSON file"
KD = ("kb_path", "targets")

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("dstc9", _dstc, DSTC_PATH, "val", ("knowledge",)),
        Format("dstc11", _dstc, DSTC_PATH, "val", ("knowledge",)),
        Format("kdconv", _kdconv, KDCONV_PATH, None, KD),
        Format("huawei", _kdconv, "valid.json or test_contexts.json of the Huawei challenge", None, KD),
        Format("smp2017", _smp2017, "folder with <split>/<split>_<label>.txt files", "train"),
        Format("mobilecs2", _mobilecs2, MOBILECS2_PATH, None, ("global_kb", "faq", "language", "rules", "qa_dialogs")),
    )
}


def load(format: str, path: str | Path, split: str | None = None, **options: Unpack[LoadOptions]) -> Dataset:
    """Load ``path`` in ``format`` into the schema."""
    try:
        spec = FORMATS[format]
    except KeyError:
        raise RagdialError(f"unknown format {format!r}; known: {', '.join(FORMATS)}") from None
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        accepted = ", ".join(spec.options) or "none"
        raise OptionError(f"format {format!r} takes no option {', '.join(unknown)} (accepted: {accepted})")
    dataset = spec.loader(path, split, **options)
    dataset.format = format
    return dataset
