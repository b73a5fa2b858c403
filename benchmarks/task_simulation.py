"""Simulated online test of the task branch (SMP2017 task-2 metrics + booking integrity): clean and with noise.

    PYTHONPATH=src python benchmarks/task_simulation.py --goals 200 --seed 0 [--db PATH] [--noise 0 0.2] [--ablation]
        [--changes 0.3] [--up-front]

Each goal is sampled against the database as the dialogs before it left it (session 9; ``--up-front`` samples
them all before the first dialog, as before, so a goal can ask for a room an earlier dialog booked). A simulated
user refuses an alternative offered once and takes it the second time (the constraint it drops is given up, as
people do; the "took an alternative" column counts those dialogs).
Builds the default database first if it is missing (seed 0, 2026-12-01, 30 days). ``--ablation`` also runs the task
branch with matching by sound (pinyin) switched off; ``--acts learned rules`` runs both act readers.
``--changes P``: that share of the goals also changes its last booking once everything is booked (cancel it, move
it a day, upgrade the flight, one night fewer, one more ticket: said plainly, without 改签 or an order number); the
goals themselves are the same as without (the changes are drawn apart), so the two figures show their cost.
Prints markdown tables: overall, and by goal kind.
The simulated user's fixed phrases come from the dev half of benchmarks/data/task_utterances.jsonl; the simulator
is still written by the same hand as the parser (it checks that the parts fit, not how real users talk).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from ragdial.task.db import default_db_path
from ragdial.task.dbgen import generate
from ragdial.task.simulation import simulate
from ragdial.task.simulator import DialogResult, summarise


def run(
    db: Path,
    goals: int,
    seed: int,
    noise: float,
    by_sound: bool = True,
    acts: str = "learned",
    changes: float = 0.0,
    up_front: bool = False,
) -> tuple[list[DialogResult], float]:
    noise_fn = None
    if noise > 0:
        from ragdial.task.noise import asr_noise_function

        noise_fn = asr_noise_function(noise)
    start = time.perf_counter()
    results = list(
        simulate(db, goals, seed, noise=noise_fn, by_sound=by_sound, acts=acts, changes=changes, up_front=up_front)
    )
    return results, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goals", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--noise", type=float, nargs="*", default=[0.0, 0.2])
    parser.add_argument("--ablation", action="store_true", help="also run without matching by sound (pinyin)")
    parser.add_argument(
        "--acts", nargs="+", default=["learned"], choices=["learned", "rules"], help="how the branch reads acts"
    )
    parser.add_argument(
        "--changes", type=float, default=0.0, help="share of goals that also change their last booking afterwards"
    )
    parser.add_argument(
        "--up-front",
        action="store_true",
        help="sample every goal before the first dialog (before session 9), not against the database as it is then",
    )
    args = parser.parse_args()
    db = args.db or default_db_path()
    if not db.exists():
        generate(db, seed=0)
    settings = [(noise, True, acts) for acts in args.acts for noise in args.noise]
    if args.ablation:
        settings += [(noise, False, args.acts[0]) for noise in args.noise]
    rows: list[str] = []
    by_kind: defaultdict[str, dict[tuple, str]] = defaultdict(dict)
    for noise, by_sound, acts in settings:
        matching = "exact + pinyin" if by_sound else "exact only"
        try:
            results, seconds = run(db, args.goals, args.seed, noise, by_sound, acts, args.changes, args.up_front)
        except Exception as err:
            rows.append(f"| {acts} | {noise:.0%} | {matching} | - | - | - | - | - | - | not run: {err} |")
            continue
        m = summarise(results)
        guidance = "n/a" if m["guidance_rate"] is None else f"{m['guidance_rate']:.3f} (n={m['off_topic_dialogs']})"
        rows.append(
            f"| {acts} | {noise:.0%} | {matching} | {m['dialogs']} | {m['completion_ratio']:.3f} "
            f"| {m['mean_turns']:.2f} "
            f"| {guidance} | {m['integrity_errors']} ({m['dialogs_with_integrity_errors']} dialogs) "
            f"| {m['relaxed_dialogs']} | {seconds:.1f} s |"
        )
        groups = defaultdict(list)
        for r in results:
            groups[r.goal.kind].append(r)
        for kind, group in groups.items():
            g = summarise(group)
            by_kind[kind][noise, by_sound, acts] = (
                f"{g['completion_ratio']:.3f} / {g['mean_turns']:.2f} (n={g['dialogs']})"
            )
    changing = f", {args.changes:.0%} of them changing a booking afterwards" if args.changes else ""
    sampled = "all sampled up front" if args.up_front else "each sampled against the database as it is then"
    print(f"Simulated online test, {args.goals} goals{changing} ({sampled}), seed {args.seed}, database {db}\n")
    print(
        "| acts | ASR noise | slot matching | dialogs | completion ratio | mean turns (unfinished = 30) "
        "| out-of-scope guidance | booking-integrity errors | took an alternative | wall time |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nBy goal kind (completion / mean turns):\n")
    names = [f"{a}, noise {n:.0%}{'' if b else ', exact only'}" for n, b, a in settings]
    print("| goal kind | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(settings))
    for kind in sorted(by_kind):
        print(f"| {kind} | " + " | ".join(by_kind[kind].get(key, "-") for key in settings) + " |")


if __name__ == "__main__":
    main()
