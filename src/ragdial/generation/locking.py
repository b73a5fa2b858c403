"""Locking for components that run one request at a time (a llama.cpp model is not reentrant).

``locked_stream(lock, open_stream)`` holds ``lock`` while a stream runs and releases it however the stream ends:
exhausted, failed, or abandoned (``close()``, or garbage collection of a stream a disconnected client dropped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from ragdial.errors import RagdialError


def locked_stream(
    lock: threading.Lock, open_stream: Callable[[], Iterator[str]], timeout: float | None = None
) -> Iterator[str]:
    """Yield ``open_stream()``'s pieces with ``lock`` held; the lock is taken on the first ``next()`` and released
    when the stream ends or is closed (the inner stream is closed too). ``timeout`` (seconds) bounds the wait."""
    if not lock.acquire(timeout=-1 if timeout is None else timeout):
        raise RagdialError(f"the model is busy: no turn within {timeout:g}s")
    try:
        stream = open_stream()
        try:
            yield from stream
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
    finally:
        lock.release()
