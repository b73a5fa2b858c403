"""ASR-style noise for simulated users: an adapter over ``ragdial.text.asr_noise`` (one implementation, there)."""

from __future__ import annotations

import random
from collections.abc import Callable

from ragdial.errors import RagdialError


def asr_noise_function(rate: float) -> Callable[[str, random.Random], str]:
    """``f(text, rng) -> noisy text`` at ``rate``, from the project's ASR-noise module."""
    try:
        from ragdial.text import asr_noise
    except ImportError as err:
        raise RagdialError("ASR noise needs ragdial.text.asr_noise, which is not in this build yet") from err
    corrupt = getattr(asr_noise, "corrupt", None) or getattr(asr_noise, "add_noise", None)
    if corrupt is None:
        raise RagdialError("ragdial.text.asr_noise has no corrupt()/add_noise() function")

    def apply(text: str, rng: random.Random) -> str:
        return corrupt(text, rate=rate, rng=rng)

    return apply
