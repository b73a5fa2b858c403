"""Decode speed of the LLM path: plain llama.cpp against greedy prompt-lookup decoding, same model, same prompts,
same run (issue 13).

The prompts are the grounded path's real generation requests on the **dev** half of
``benchmarks/data/demo_conversations.jsonl`` (a seeded sample of conversations per language): each conversation is
asked turn by turn through the one ``DialogSystem`` with the extractive generator, and every request its grounded
path sends to a generator (the policy guidance, the cut knowledge, the dialog) is recorded; no LLM runs in that
pass, so the prompts do not depend on the generators measured. Each recorded request is then decoded by every
variant in turn (the variants interleaved request by request, so machine load falls on all alike):

- ``plain``: llama-cpp-python ``create_chat_completion``, greedy (``prompt_lookup=0``, ``prefix_cache=0``), the
  baseline;
- ``greedy``: ``ragdial.generation.lookup.GreedyDecoder`` without drafts (the default path: prompt-head snapshots);
- ``lookup=K``: ``ragdial.generation.lookup.GreedyDecoder`` with drafts of at most K tokens, cut to fill whole
  blocks of 4 rows with the token before them (3 or 7 tokens; ``lookup=K/1``: not cut to blocks).

Per variant: time to the first token (p50), decode tokens/s (tokens after the first over the time after the first
token, summed over requests), draft tokens proposed and accepted, and how many replies equal plain's text exactly.
The load average is printed before and after: the machine is shared.

``--batch-costs R`` measures instead what drafting has to beat: the time of one ``llama_decode`` call of 1..8
tokens (logits on every row, as a draft's verification needs) after a recorded prompt, the sizes interleaved round
by round (R rounds), printed as the median per size and its ratio to a single token. A draft of k tokens pays only
when the tokens it is expected to add (accepted ones) beat that ratio: batch(k+1)/batch(1) - 1. It then bounds
what any prompt-lookup drafting could gain on the recorded requests: each is decoded greedily, and an oracle that
knows the reply drafts, at every step, the part of the prompt-lookup draft that will be accepted, and only when that
call's cost per token (by the measured curve) is below a single token's; the bound is the reply tokens over the
summed call costs, in single-token units.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lookup_speed.py --sample 3 --variants plain,lookup=16
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lookup_speed.py --sample 2 --threads 1 \
        --variants plain,greedy,lookup=8,lookup=8/1
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lookup_speed.py --sample 1 --batch-costs 30 --threads 1
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lookup_speed.py --sample 2 --ratios 1,2.4,2.9,3.3,3.8,4.1,4.3,4.6
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def oracle_bound(generator: LlamaCppGenerator, requests: list[GenerationRequest], ratio: dict[int, float]) -> None:
    """The speed-up over one-token decoding an oracle prompt-lookup drafter would reach under the cost ``ratio``."""
    from ragdial.generation.lookup import DraftIndex

    decoder = generator._decoder
    assert decoder is not None
    largest = max(ratio) - 1
    tokens = cost = 0.0
    drafted_calls = calls = 0
    for request in requests:
        messages, max_tokens = generator.fit(request)
        prompt, head = generator.prompt_tokens(messages, request.language)
        reply = list(decoder.generate(prompt, min(max_tokens, 128), prefix=head))
        index = DraftIndex(prompt)
        if reply:
            index.add(reply[0])
        done = 1
        while done < len(reply):
            draft = index.draft(largest)
            accepted = 0
            for proposed, actual in zip(draft, reply[done:], strict=False):
                if proposed != actual:
                    break
                accepted += 1
            accepted = min(accepted, len(reply) - done - 1)
            best = max(range(accepted + 1), key=lambda k: (k + 1) / ratio[k + 1])
            calls += 1
            drafted_calls += best > 0
            cost += ratio[best + 1]
            for token in reply[done : done + best + 1]:
                index.add(token)
            tokens += best + 1
            done += best + 1
    print(
        f"\noracle prompt-lookup bound on {len(requests)} requests: {int(tokens)} tokens after the first in {calls} "
        f"calls ({drafted_calls} with a draft); cost {cost:.1f} single-token units: at most **{tokens / cost:.2f}x** "
        "one-token decoding"
    )


def batch_costs(
    generator: LlamaCppGenerator, request: GenerationRequest, rounds: int, sizes: int = 8
) -> dict[int, float]:
    """Median time of one decode call of 1..``sizes`` tokens at the end of ``request``'s prompt, interleaved."""
    decoder = generator._decoder
    assert decoder is not None
    messages, _ = generator.fit(request)
    prompt, _ = generator.prompt_tokens(messages, request.language)
    list(decoder.generate(prompt, 1))  # the prompt in the cache
    position = len(prompt)
    times: dict[int, list[float]] = {k: [] for k in range(1, sizes + 1)}
    load_before = os.getloadavg()
    for _ in range(rounds):
        for size in times:
            started = time.perf_counter()
            decoder._decode(prompt[-size:], position, logits=True)
            times[size].append(time.perf_counter() - started)
            generator.llm._ctx.kv_cache_seq_rm(-1, position, -1)
    load_after = os.getloadavg()
    print(
        f"decode call by batch size, after a {position}-token prompt, {rounds} rounds, {generator.n_threads} threads; "
        f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}\n"
    )
    single = statistics.median(times[1])
    print("| tokens in the call | median ms | x one token | a draft of k = size-1 pays if it adds more than |")
    print("|---:|---:|---:|---:|")
    for size, values in times.items():
        ratio = statistics.median(values) / single
        print(f"| {size} | {statistics.median(values) * 1000:.1f} | {ratio:.2f} | {ratio - 1:.2f} accepted tokens |")
    return {size: statistics.median(values) / single for size, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev",), default="dev", help="dev only: the test half is not for tuning")
    parser.add_argument("--sample", type=int, default=3, help="conversations per language")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--variants", default="plain,lookup=16")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-costs", type=int, default=0, help="rounds of the decode cost curve (0: off)")
    parser.add_argument(
        "--ratios", help="the oracle bound under this cost curve instead (batch 1..8 over one token, comma-separated)"
    )
    args = parser.parse_args(argv)
    requests = [
        replace(r, max_tokens=min(r.max_tokens, args.max_tokens)) for r in record(args.split, args.sample, args.seed)
    ]
    if args.batch_costs or args.ratios:
        generator = LlamaCppGenerator(n_ctx=2048, n_threads=args.threads)
        generator.warm_up()
        if args.ratios:
            ratio = {size: float(value) for size, value in enumerate(args.ratios.split(","), start=1)}
        else:
            ratio = batch_costs(generator, max(requests, key=lambda r: len(r.knowledge)), args.batch_costs)
        oracle_bound(generator, requests, ratio)
        generator.close()
        return 0
    load_before = os.getloadavg()
    generators: dict[str, LlamaCppGenerator] = {}
    for variant in args.variants.split(","):
        setting, _, block = variant.partition("=")[2].partition("/")
        draft = int(setting or 0) if variant.startswith("lookup") else 0
        cache = 0 if variant == "plain" else 8
        generators[variant] = LlamaCppGenerator(
            n_ctx=2048, n_threads=args.threads, prompt_lookup=draft, prefix_cache=cache
        )
        generators[variant].warm_up()
        decoder = generators[variant]._decoder
        if block and decoder is not None:
            decoder.block = int(block)
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
