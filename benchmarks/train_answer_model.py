"""Train the grounded path's answer model (route, ranking, policy) on labelled demo conversations and write it
to ``src/ragdial/resources/answer_model.json`` (the packaged model).

Only tuning data is read: the ``train`` set (``benchmarks/data/demo_conversations_train.jsonl``), the ``dev`` half
of the first set and the sets retired in session 10 (``test``, ``test2``, ``test3``: run and reported twice as locked
sets, training data since); the locked sets (``test4``, ``test5``) are refused, never used for training or model
choice. Each turn is seen as the pipeline sees it, with the earlier system turns citing the earlier turns' gold items
(teacher forcing), through the same ``KnowledgeBranch.analyse`` the pipeline uses. Deterministic: the same data
gives the same file.

    PYTHONPATH=src python benchmarks/train_answer_model.py    # = --splits train,dev,test,test2,test3 (the pool)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grounded_answers import LOCKED_SPLITS, TUNING, load_set
from ragdial.pipeline.answer_features import source_of, turn_numbers, turn_terms
from ragdial.pipeline.answer_model import Example, fit_answer_model
from ragdial.pipeline.branch import KnowledgeBranch
from ragdial.pipeline.components import build_system
from ragdial.pipeline.config import ComponentSpec, SystemConfig
from ragdial.schema import Speaker, Turn
from ragdial.understanding.policy import OTHER_LANGUAGE

OUT = Path(__file__).resolve().parents[1] / "src" / "ragdial" / "resources" / "answer_model.json"
POLICY_OF_KIND = {"not_in_knowledge": "not_in_knowledge", "account_action": "action", "small_talk": "small_talk"}
HISTORY = 10


def examples_of(rows: list[dict[str, Any]], branches: dict[str, KnowledgeBranch]) -> list[Example]:
    """One example per user turn (turns in another language excepted), teacher-forced."""
    examples = []
    for row in rows:
        branch = branches[row["language"]]
        user = None if row["profile"] == "demo-guest" else row["profile"]
        history: list[Turn] = []
        for turn in row["turns"]:
            context = [*history, Turn(Speaker.USER, turn["user"])][-HISTORY:]
            analysis = branch.analyse(context, user, score=False)
            gold = [g for g in turn["gold"] if g in branch.items]
            if analysis.intent.policy != OTHER_LANGUAGE:
                policy = POLICY_OF_KIND.get(turn["kind"], "answer")
                route = source_of(branch.items[gold[0]]) if gold else None
                examples.append(
                    Example(
                        row["id"],
                        turn_terms(analysis.view),
                        turn_numbers(analysis.view, analysis.candidates),
                        analysis.candidates,
                        frozenset(gold),
                        route,
                        policy,
                        analysis.vector,
                    )
                )
            cited = gold[:3] if turn["kind"] not in ("not_in_knowledge", "small_talk") else []
            history += [Turn(Speaker.USER, turn["user"]), Turn(Speaker.SYSTEM, "", knowledge_ids=cited)]
    return examples


def training_splits(text: str) -> list[str]:
    """The comma-separated splits of ``text``; ``ValueError`` for a locked set (never trained on) or an unknown
    name."""
    splits = [s.strip() for s in text.split(",") if s.strip()]
    locked = [s for s in splits if s in LOCKED_SPLITS]
    if locked:
        raise ValueError(f"{', '.join(locked)}: the locked sets ({', '.join(LOCKED_SPLITS)}) are never trained on")
    unknown = [s for s in splits if s not in (*TUNING, "near_miss")]
    if unknown:
        raise ValueError(f"unknown split(s) {', '.join(unknown)}: choose from {', '.join((*TUNING, 'near_miss'))}")
    return splits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--splits",
        default=",".join(TUNING),
        help=f"comma-separated tuning splits ({', '.join(TUNING)}; never {', '.join(LOCKED_SPLITS)})",
    )
    parser.add_argument(
        "--policy-only", default="", help="comma-separated splits that train the policy head alone (near_miss)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    try:
        splits, policy_splits = training_splits(args.splits), training_splits(args.policy_only)
    except ValueError as err:
        parser.error(str(err))
    config = SystemConfig(generator=ComponentSpec("extractive"))
    branches = {lang: build_system(config, lang).knowledge_branch for lang in ("zh", "en")}
    rows = [row for split in splits for row in load_set(split)]
    examples = examples_of(rows, branches)
    extra = examples_of([row for split in policy_splits for row in load_set(split)], branches)
    model = fit_answer_model(examples, vector_heads=("route", "policy"), policy_only=extra)
    model.meta["splits"] = splits
    if policy_splits:
        model.meta["policy_only_splits"] = policy_splits
    model.meta["conversations"] = len(rows)
    model.save(args.out)
    print(json.dumps(model.meta, indent=1), file=sys.stderr)
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} kB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
