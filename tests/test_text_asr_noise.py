"""ASR-noise simulation: reproducible, rate-controlled, sound-alike substitutions."""

from __future__ import annotations

import pytest
from pypinyin import Style, lazy_pinyin

from ragdial.schema import Example, Speaker, Turn
from ragdial.text.asr_noise import SOUND_ALIKES, corrupt, corrupt_context

ZH = "请问这个景点的门票多少钱，开放时间是几点到几点，附近有没有好吃的饭馆" * 4


def test_same_seed_same_output_and_zero_rate_is_identity():
    assert corrupt(ZH, 0.2, seed=7) == corrupt(ZH, 0.2, seed=7)
    assert corrupt(ZH, 0.2, seed=7) != corrupt(ZH, 0.2, seed=8)
    assert corrupt(ZH, 0.0) == ZH
    assert corrupt("", 0.5) == ""


def test_chinese_substitutions_are_homophones_at_about_the_rate():
    noisy = corrupt(ZH, 0.2, seed=1)
    assert len(noisy) == len(ZH)
    changed = [(a, b) for a, b in zip(ZH, noisy, strict=True) if a != b]
    assert 0.08 * len(ZH) < len(changed) < 0.32 * len(ZH)
    for original, swapped in changed:
        assert lazy_pinyin(original, style=Style.NORMAL) == lazy_pinyin(swapped, style=Style.NORMAL)


def test_english_swaps_only_sound_alikes():
    text = "Is there free parking at the inn? I would like to book four nights."
    noisy = corrupt(text, 1.0, seed=0)
    assert noisy != text
    for a, b in zip(text.split(), noisy.split(), strict=True):
        a, b = a.strip("?.").lower(), b.strip("?.").lower()
        assert a == b or b in SOUND_ALIKES[a]


def test_bad_rate_is_rejected():
    with pytest.raises(ValueError, match="noise rate"):
        corrupt("abc", 1.5)


def test_only_user_turns_are_corrupted():
    example = Example("e", "d", 2, [Turn(Speaker.USER, ZH), Turn(Speaker.SYSTEM, ZH)])
    noisy = corrupt_context(example, 0.5, seed=3)
    assert noisy.context[0].text != ZH
    assert noisy.context[1].text == ZH
    assert example.context[0].text == ZH  # the original is untouched
