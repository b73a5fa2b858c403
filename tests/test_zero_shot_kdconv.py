"""The KdConv cross-domain benchmark's reading of wrong triples (benchmarks/zero_shot.py ``wrong_triple_kinds``),
on a hand-written two-dialog stand-in: our own triples and turns."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from ragdial.datasets import kdconv
from ragdial.schema import Example, KnowledgeBase, Speaker, Turn

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

FILM_YEAR = kdconv.triple("晨雾", "上映时间", "2011年")
FILM_DIRECTOR = kdconv.triple("晨雾", "导演", "林远")
DIRECTOR_BORN = kdconv.triple("林远", "出生日期", "1970年3月2日")
DIRECTOR_JOB = kdconv.triple("林远", "职业", "导演、编剧")
KB = KnowledgeBase([FILM_YEAR, FILM_DIRECTOR, DIRECTOR_BORN, DIRECTOR_JOB])


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("zero_shot")


def turn(dialog: str, index: int, text: str, gold: list[str]) -> Example:
    return Example(
        id=f"{dialog}:{index}",
        dialog_id=dialog,
        turn_index=index,
        context=[Turn(Speaker.USER, text)],
        needs_knowledge=bool(gold),
        knowledge_ids=gold,
    )


def test_wrong_triples_are_split_into_a_new_entity_a_seen_entity_and_a_wrong_attribute(bench: ModuleType) -> None:
    examples = [
        turn("1", 1, "看过晨雾吗？", [FILM_YEAR.id]),  # right
        turn("1", 3, "导演是谁？", [FILM_DIRECTOR.id]),  # the film's year again: gold entity, other attribute
        turn("1", 5, "林远是哪年出生的？", [DIRECTOR_BORN.id]),  # the film stated: the talk moved to a new entity
        turn("1", 7, "他还做什么？", [DIRECTOR_JOB.id]),  # silent: not a wrong triple
        turn("1", 9, "那部电影呢？", [FILM_DIRECTOR.id]),  # the director stated while the film (seen) is asked
        turn("2", 1, "你好", []),  # no gold: never counted, even when something is stated
        turn("2", 3, "林远导演过什么？", [FILM_DIRECTOR.id]),  # dialog 2 has not seen the film: new
    ]
    selections = [
        [FILM_YEAR.id],
        [FILM_YEAR.id, DIRECTOR_BORN.id],
        [FILM_YEAR.id],
        [],
        [DIRECTOR_JOB.id],
        [FILM_YEAR.id],
        [DIRECTOR_BORN.id],
    ]
    kinds = bench.wrong_triple_kinds(examples, selections, KB)
    assert kinds == {
        "other entity, gold entity new": 2,
        "other entity, gold entity seen": 1,
        "gold entity, other attribute": 1,
    }
    assert list(kinds) == list(bench.WRONG_KINDS)


def test_a_turn_with_any_gold_triple_stated_is_not_wrong(bench: ModuleType) -> None:
    examples = [turn("1", 1, "导演是谁？", [FILM_DIRECTOR.id])]
    kinds = bench.wrong_triple_kinds(examples, [[DIRECTOR_JOB.id, FILM_DIRECTOR.id]], KB)
    assert sum(kinds.values()) == 0
