"""Decode speed of the LLM path: plain llama.cpp against greedy prompt-lookup decoding, same model, same prompts,
same run (issue 13).

The prompts are the grounded path's real generation requests on the **dev** half of
``benchmarks/data/demo_conversations.jsonl`` (a seeded sample of conversations per language): each conversation is
asked turn by turn through the one ``DialogSystem`` with the extractive generator, and every request its grounded
path sends to a generator (the policy guidance, the cut knowledge, the dialog) is recorded; no LLM runs in that
pass, so the prompts do not depend on the generators measured. Each recorded request is then decoded by every
variant in turn (the variants interleaved request by request, so machine load falls on all alike):

- ``plain``: llama-cpp-python ``create_chat_completion``, greedy (``prompt_lookup=0``), the baseline;
- ``lookup=K``: ``ragdial.generation.lookup.GreedyDecoder`` with drafts of at most K tokens.

Per variant: time to the first token (p50), decode tokens/s (tokens after the first over the time after the first
token, summed over requests), draft tokens proposed and accepted, and how many replies equal plain's text exactly.
The load average is printed before and after: the machine is shared.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lookup_speed.py --sample 3 --variants plain,lookup=16
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from grounded_answers import load_set
from ragdial.evaluation.latency import Latency
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.llama import LlamaCppGenerator
from ragdial.pipeline.components import build_system
from ragdial.pipeline.config import ComponentSpec, SystemConfig


class Recorder(Generator):
    """Passes requests to ``inner`` and keeps a copy of each."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner
        self.requests: list[GenerationRequest] = []

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        self.requests.append(replace(request, usage={}, cancel=None))
        return self.inner.stream(request)


def record(split: str, sample: int, seed: int) -> list[GenerationRequest]:
    """The generation requests the grounded path sends on ``sample`` conversations per language of ``split``."""
    config = SystemConfig(generator=ComponentSpec("extractive", {}), grounded=True)
    requests: list[GenerationRequest] = []
    systems: dict[str, Any] = {}
    for row in load_set(split, sample, seed):
        language = row["language"]
        if language not in systems:
            system = build_system(config, language)
            recorder = Recorder(system.knowledge_branch.generator)
            system.knowledge_branch.generator = recorder
            systems[language] = (system, recorder)
        system, recorder = systems[language]
        session = system.new_session(None if row["profile"] == "demo-guest" else row["profile"])
        for turn in row["turns"]:
            reply = system.respond(session, turn["user"])
            session.add(reply.record)
    for _, recorder in systems.values():
        requests.extend(recorder.requests)
    return requests


def decode(generator: LlamaCppGenerator, request: GenerationRequest) -> dict[str, Any]:
    request = replace(request, usage={})
    started = time.perf_counter()
    first = None
    text = []
    for piece in generator.stream(request):
        if first is None:
            first = time.perf_counter()
        text.append(piece)
    ended = time.perf_counter()
    stats = generator._decoder.stats if generator._decoder is not None else None
    return {
        "text": "".join(text),
        "ttft": (first or ended) - started,
        "after_first": ended - (first or ended),
        "tokens": request.usage.get("completion_tokens", 0),
        "drafted": stats.drafted if stats else 0,
        "accepted": stats.accepted if stats else 0,
        "reused": stats.reused_tokens if stats else 0,
        "prompt": request.usage.get("prompt_tokens", 0),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev",), default="dev", help="dev only: the test half is not for tuning")
    parser.add_argument("--sample", type=int, default=3, help="conversations per language")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--variants", default="plain,lookup=16")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    requests = [
        replace(r, max_tokens=min(r.max_tokens, args.max_tokens)) for r in record(args.split, args.sample, args.seed)
    ]
    load_before = os.getloadavg()
    generators: dict[str, LlamaCppGenerator] = {}
    for variant in args.variants.split(","):
        draft = int(variant.partition("=")[2] or 0) if variant.startswith("lookup") else 0
        generators[variant] = LlamaCppGenerator(n_ctx=2048, n_threads=args.threads, prompt_lookup=draft)
        generators[variant].warm_up()
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in generators}
    for request in requests:
        for variant, generator in generators.items():
            results[variant].append(decode(generator, request))
    load_after = os.getloadavg()
    reference = results[next(iter(results))]
    print(
        f"split {args.split}: {args.sample} conversations per language (seed {args.seed}), {len(requests)} requests, "
        f"max {args.max_tokens} new tokens, {args.threads} threads; load average before "
        f"{load_before[0]:.1f}, after {load_after[0]:.1f}\n"
    )
    print(
        "| variant | first token p50 (s) | decode tok/s | tokens | drafted | accepted | same text as first "
        "| prompt tokens (reused) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant, rows in results.items():
        tokens = sum(max(0, r["tokens"] - 1) for r in rows)
        seconds = sum(r["after_first"] for r in rows)
        same = sum(r["text"] == ref["text"] for r, ref in zip(rows, reference, strict=True))
        print(
            f"| {variant} | {Latency.of([r['ttft'] * 1000 for r in rows]).p50 / 1000:.3f} | "
            f"{tokens / seconds if seconds else 0:.1f} | {sum(r['tokens'] for r in rows)} | "
            f"{sum(r['drafted'] for r in rows)} | {sum(r['accepted'] for r in rows)} | {same}/{len(rows)} | "
            f"{sum(r['prompt'] for r in rows)} ({sum(r['reused'] for r in rows)}) |"
        )
    for generator in generators.values():
        generator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
