"""ASR-style noise for simulated users: an adapter over ``ragdial.text.asr_noise`` (one implementation, there)."""

from __future__ import annotations

import random
from collections.abc import Callable

from ragdial.errors import RagdialError


def asr_noise_function(rate: float) -> Callable[[str, random.Random], str]:
    """``f(text, rng) -> noisy text``: ``ragdial.text.asr_noise.corrupt`` at ``rate``, seeded from ``rng``."""
    if not 0.0 <= rate <= 1.0:
        raise RagdialError(f"noise rate {rate} must be between 0 and 1")
    try:
        from ragdial.text.asr_noise import corrupt
    except ImportError as err:
        raise RagdialError("ASR noise needs ragdial.text.asr_noise, which is not in this build yet") from err

    def apply(text: str, rng: random.Random) -> str:
        return corrupt(text, rate, seed=rng.randrange(2**31))

    return apply
