"""Reply quality with gold knowledge: DSTC11 val fold 0, Huawei valid fold 0, KdConv travel dev.

    PYTHONPATH=src python benchmarks/generation_quality.py --backend template
    PYTHONPATH=src python benchmarks/generation_quality.py --backend llama --sample 100

Prints a markdown table. The template backend learns from the training part of each split; the LLM gets
2 in-context exemplars retrieved (BM25) from the same training part. See generation_common.py for splits and
scoring.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from generation_common import merged_kb, sample, split_folds
from ragdial import datasets
from ragdial.evaluation import GenerationEvaluator, reply_scores
from ragdial.generation import Generator, create
from ragdial.generation.batch import request_for
from ragdial.generation.exemplars import ExemplarIndex, Exemplars
from ragdial.generation.template import TemplateGenerator
from ragdial.paths import data_root


def tasks(root: Path):
    """(name, language, train examples, eval examples, dataset for eval, kb for training)."""
    dstc = datasets.load("dstc11", root / "dstc11_track5", "val")
    train, evaluate = split_folds(dstc)
    yield (
        "DSTC11 val fold 0",
        dstc,
        [e for e in train if e.needs_knowledge],
        [e for e in evaluate if e.needs_knowledge],
        dstc.kb,
    )
    huawei = datasets.load("huawei", root / "huawei_kdsd" / "valid.json")
    train, evaluate = split_folds(huawei)
    yield "Huawei valid fold 0", huawei, train, evaluate, huawei.kb
    film = datasets.load("kdconv", root / "kdconv" / "film")
    music = datasets.load("kdconv", root / "kdconv" / "music")
    travel = datasets.load("kdconv", root / "kdconv" / "travel")
    yield (
        "KdConv travel dev (train film+music)",
        travel,
        [*film.examples, *music.examples],
        travel.examples,
        merged_kb(film, music),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="template", choices=["template", "llama", "openai"])
    parser.add_argument("--sample", type=int, default=None, help="a seeded random sample of eval examples per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exemplars", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads (1 is faster on a busy machine)")
    parser.add_argument(
        "--prompt-turns",
        type=int,
        default=None,
        help="llama: dialog turns shown in the prompt (default: the generator's, 3 since session 9; 0: all that fit)",
    )
    parser.add_argument("--only", default=None, help="run only tasks whose name contains this")
    parser.add_argument("--dump", default=None, help="write predictions as JSON lines here")
    parser.add_argument("--score-dump", default=None, help="only score the predictions of an earlier --dump")
    args = parser.parse_args()
    if args.score_dump:
        score_dump(Path(args.score_dump))
        return
    root = data_root()
    rows = []
    shared = (
        None
        if args.backend == "template"
        else create(
            args.backend,
            base_url=args.base_url,
            n_threads=args.threads if args.backend == "llama" else None,
            prompt_turns=args.prompt_turns if args.backend == "llama" else None,
        )
    )
    dump = open(args.dump, "w", encoding="utf-8", buffering=1) if args.dump else None  # noqa: SIM115
    for name, dataset, train, evaluate, train_kb in tasks(root):
        if args.only and args.only not in name:
            continue
        evaluate = sample(evaluate, args.sample, args.seed)
        started = time.perf_counter()
        generator: Generator
        if args.backend == "template":
            generator = TemplateGenerator.train(train, train_kb, dataset.language)
            exemplars = None
        else:
            assert shared is not None  # made above for every backend but the template
            generator = shared
            exemplars = (
                Exemplars(ExemplarIndex(train, train_kb, dataset.language), args.exemplars) if args.exemplars else None
            )

        def write_dump(example, reply, name=name):
            if dump:
                record = {"task": name, "id": example.id, "pred": reply, "gold": example.response}
                dump.write(json.dumps(record, ensure_ascii=False) + "\n")

        def generate(example, dataset=dataset, generator=generator, exemplars=exemplars):
            request = request_for(example, dataset, args.max_tokens, args.seed, exemplars)
            return generator.generate(request)

        result = GenerationEvaluator(evaluate, dataset.language, name, write_dump)(generate)
        rows.append((name, len(evaluate), result.scores, time.perf_counter() - started))
    print(f"backend: {args.backend}; sample: {args.sample or 'all'} (seed {args.seed}); gold knowledge\n")
    for name, n, scores, seconds in rows:
        print_table(name, n, scores, seconds)


def score_dump(path: Path) -> None:
    by_task: dict[str, list[dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        by_task.setdefault(record["task"], []).append(record)
    for name, records in by_task.items():
        predictions, references = [r["pred"] for r in records], [r["gold"] or "" for r in records]
        language = "en" if name.startswith("DSTC") else "zh"
        print_table(name, len(records), reply_scores(predictions, references, language))


def print_table(name: str, n: int, scores: dict[str, float], seconds: float | None = None) -> None:
    timing = f", {seconds:.0f} s" if seconds is not None else ""
    print(f"**{name}** ({n} replies{timing})\n")
    print("| " + " | ".join(scores) + " |")
    print("|" + "---|" * len(scores))
    print("| " + " | ".join(f"{v:.4f}" for v in scores.values()) + " |\n")


if __name__ == "__main__":
    main()
