"""Dialog-act accuracy and slot F1 of the task branch's understanding on the locked utterance bank.

    PYTHONPATH=src python benchmarks/task_nlu.py [--db PATH] [--errors] [--json OUT]

The bank (``benchmarks/data/task_utterances.jsonl``, conventions in ``README_task_utterances.md``) was written
by someone who had not read the parser. ``dev`` is for tuning; ``test`` is locked: this script reports only its
aggregate figures and never prints a test line (``--errors`` lists dev lines only). ``test2``
(``task_utterances_test2.jsonl``) is a fresh locked half by a new hand (session 10), same rules; the default runs dev
only, so a locked half is looked at only when named.

Act accuracy: a line is right when its predicted act sequence equals the gold one (names, in order).
Slot F1: micro-averaged over (act, slot, value) triples of all lines (lists compared as sets); reference slots
of ``select``/``request`` and the ``"?"`` of requested attributes count like any slot.
Select target accuracy: of the gold ``select`` lines with a target, how many resolve to that offer.

``--acts rules learned`` (the default) scores the rule layer alone and the learned act model combined with it
(``ragdial.task.act_model``, trained on the training bank's ``train`` lines and this bank's ``dev`` half; it is
trained inside the run, in a temporary folder). dev is part of the learned model's training data: its dev figure
is not a result.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ragdial.task.act_model import reader_for
from ragdial.task.acts import Context, understand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _task_common import seed_db  # the one seed-0 set-up of the task benchmarks

BANK = Path(__file__).resolve().parent / "data" / "task_utterances.jsonl"
FRESH_BANK = BANK.with_name("task_utterances_test2.jsonl")  # the fresh locked half (session 10, a new hand)
TODAY = dt.date(2026, 12, 1)


def _value(value: Any) -> Any:
    return tuple(sorted(value)) if isinstance(value, list) else value


def triples(acts: list[dict[str, Any]]) -> Counter:
    return Counter((a["act"], k, _value(v)) for a in acts for k, v in a["slots"].items())


def score(rows: list[dict[str, Any]], predict) -> dict[str, Any]:
    right = tp = fp = fn = 0
    per_act: Counter = Counter()
    per_act_right: Counter = Counter()
    errors = []
    for row in rows:
        pred = [a.to_dict() for a in predict(row["text"], row["context"])]
        gold_names = [a["act"] for a in row["acts"]]
        ok = [a["act"] for a in pred] == gold_names
        right += ok
        for name in set(gold_names):
            per_act[name] += 1
            per_act_right[name] += ok
        g, p = triples(row["acts"]), triples(pred)
        common = sum((g & p).values())
        tp += common
        fp += sum(p.values()) - common
        fn += sum(g.values()) - common
        if not ok or g != p:
            errors.append((row, pred))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "lines": len(rows),
        "act_accuracy": right / len(rows) if rows else 0.0,
        "slot_precision": precision,
        "slot_recall": recall,
        "slot_f1": f1,
        "act_accuracy_by_act": {a: per_act_right[a] / per_act[a] for a in sorted(per_act)},
        "_errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, default=None, help="the seed-0 database (built in a temp dir if absent)")
    parser.add_argument("--errors", action="store_true", help="print the dev lines that are wrong")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--splits", nargs="+", default=["dev"], choices=["dev", "test", "test2"])
    parser.add_argument(
        "--acts",
        nargs="+",
        default=["rules", "learned"],
        choices=["rules", "learned"],
        help="rules: the rule layer alone; learned: the act model (trained on train + dev) combined with the rules",
    )
    parser.add_argument(
        "--train-bank",
        action="store_true",
        help="also score the rules alone on the training bank (task_utterances_train.jsonl, all its lines): the rules "
        "were tuned looking at its errors, so this is no held-out figure; the learned model trains on it",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in BANK.read_text(encoding="utf-8").splitlines() if line.strip()]
    if "test2" in args.splits:
        if not FRESH_BANK.exists():
            raise SystemExit(f"no fresh locked half: {FRESH_BANK}")
        rows += [json.loads(line) for line in FRESH_BANK.read_text(encoding="utf-8").splitlines() if line.strip()]
    with seed_db(args.db) as (db, tmp):
        gaz = db.gazetteer()

        def rules(text: str, context: dict[str, Any]):
            return understand(text, Context.from_dict(context), gaz, TODAY)

        readers = {"rules": rules}
        if "learned" in args.acts:
            reader = reader_for(gaz, TODAY, cache=tmp / "act_model")
            if reader is None:
                raise SystemExit("no training bank found: benchmarks/data/task_utterances_train.jsonl")
            readers["learned"] = lambda text, context: reader(text, Context.from_dict(context))
        results = {}
        for acts in args.acts:
            for split in args.splits:
                key = split if len(args.acts) == 1 else f"{split} ({acts})"
                results[key] = score([r for r in rows if r["split"] == split], readers[acts])
        if args.train_bank:
            train = BANK.with_name("task_utterances_train.jsonl").read_text(encoding="utf-8").splitlines()
            results["training bank (rules)"] = score([json.loads(line) for line in train if line.strip()], rules)
    dev_keys = [k for k in results if k.startswith("dev")]
    if args.errors and dev_keys:
        for row, pred in results[dev_keys[0]]["_errors"]:
            c = row["context"]
            print(f"{row['id']} [{row['phenomenon']}] {row['text']}  | ctx {c.get('domain')}/{c.get('open_question')}")
            print("   gold:", json.dumps(row["acts"], ensure_ascii=False))
            print("   pred:", json.dumps(pred, ensure_ascii=False))
    print("| split | lines | act accuracy | slot precision | slot recall | slot F1 |")
    print("|---|---|---|---|---|---|")
    for split, m in results.items():
        print(
            f"| {split} | {m['lines']} | {m['act_accuracy']:.3f} | {m['slot_precision']:.3f} | "
            f"{m['slot_recall']:.3f} | {m['slot_f1']:.3f} |"
        )
    print("\nAct accuracy by gold act (a line counts for each act it holds):\n")
    acts = sorted({a for m in results.values() for a in m["act_accuracy_by_act"]})
    print("| act | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for act in acts:
        print(
            f"| {act} | " + " | ".join(f"{m['act_accuracy_by_act'].get(act, 0):.3f}" for m in results.values()) + " |"
        )
    if args.json:
        out = {s: {k: v for k, v in m.items() if not k.startswith("_")} for s, m in results.items()}
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
