"""Where the first token of the grounded LLM path goes, and what the prompt-head snapshots and clause streaming cut
(issue 13), same model, same turns, same run.

The **dev** conversations of ``benchmarks/data/demo_conversations.jsonl`` (a seeded sample per language) are asked
turn by turn, the languages alternating as they do in a service that serves both with one model, through the one
``DialogSystem`` (the analysis runs once per turn; every variant answers it in its own session with its own model,
the variants interleaved turn by turn so machine load falls on all alike):

- ``plain``: llama-cpp-python's ``create_chat_completion`` (``prefix_cache: 0``), a reply delivered by sentence:
  the path before this change;
- ``head``: the greedy decoder with snapshots of the prompt head (the default), by sentence;
- ``head+clause``: the same, and a verified clause delivered as soon as it passes (the default path);
- ``head+clause+primed``: the same with the answer heads of both languages primed before the first turn, as the
  service's warm-up does (``KnowledgeBranch.warm_up``);
- ``head+clause+primed+turns``: the same keeping whole turns (``turn_cache``, the default): a session's next turn
  over the same knowledge restores its last turn and evaluates only the new dialog;
- ``...+recent3`` / ``...+recent1``: the same showing the model only the last 3 dialog turns (the last exchange and
  the question) / the question alone (``prompt_turns``).

Per turn that calls the model, the first token splits into: the analysis (understand: rewrite, routing, retrieval,
policy), the prompt (from the generator call to its first piece: prompt evaluation and the first decode step), and
the hold (from the first generated piece to the first delivered one: decoding the rest of the first sentence or
clause and checking it). Printed: p50 of each part and of the first delivered token, the whole turn's p50 / p95 (to
the reply, retries and fallbacks included), prompt tokens evaluated (all, and those taken from the cache or a
snapshot), the first token of the first LLM turn of each language, decode tokens/s (tokens after the first piece of
each generator call over the time after it), and how often a reply was cut after a verified part (``truncated``),
with the load average before and after.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/first_token_split.py --sample 3
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import ragdial.pipeline.branch as branch_module
from grounded_answers import load_set
from ragdial.evaluation.latency import Latency
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.llama import LlamaCppGenerator
from ragdial.pipeline.components import build_systems
from ragdial.pipeline.config import ComponentSpec, SystemConfig
from ragdial.pipeline.grounded import Grounding, stream_verified
from ragdial.pipeline.turn import Piece, Reply

# prefix_cache, clauses, primed (the answer heads of both languages evaluated before the first turn, as warm-up
# does), turn_cache (whole turns kept: a session's next turn over the same knowledge restores its last one),
# prompt_turns (only the last k dialog turns in the prompt; 0: all)
VARIANTS = {
    "plain": (0, False, False, 0, 0),
    "head": (8, False, False, 0, 0),
    "head+clause": (8, True, False, 0, 0),
    "head+clause+primed": (8, True, True, 0, 0),
    "head+clause+primed+turns": (8, True, True, 8, 0),
    "head+clause+primed+turns+recent3": (8, True, True, 8, 3),
    "head+clause+primed+turns+recent1": (8, True, True, 8, 1),
}


class Timed(Generator):
    """Passes requests to ``inner``; keeps when each call started and when its first piece came."""

    def __init__(self, inner: LlamaCppGenerator) -> None:
        self.inner = inner
        self.calls: list[dict[str, float]] = []

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        call: dict[str, float] = {"start": time.perf_counter()}
        self.calls.append(call)
        try:
            for piece in self.inner.stream(request):
                call.setdefault("first", time.perf_counter())
                yield piece
        finally:  # the grounded path stops a stream at a failing sentence
            call["end"] = time.perf_counter()
            call["tokens"] = request.usage.get("completion_tokens", 0)
            call["prompt"] = request.usage.get("prompt_tokens", 0)
            stats = self.inner._decoder.stats if self.inner._decoder is not None else None
            call["reused"] = stats.reused_tokens if stats else float("nan")


def ask(systems: dict[str, Any], timed: Timed, clauses: bool, session: Any, language: str, text: str) -> dict:
    system = systems[language]
    system.knowledge_branch.generator = timed
    branch_module.stream_verified = functools.partial(stream_verified, clauses=clauses)
    timed.calls.clear()
    start = time.perf_counter()
    first = None
    reply = None
    for event in system.stream(session, text):
        if isinstance(event, Piece) and first is None:
            first = time.perf_counter()
        if isinstance(event, Reply):
            reply = event
    assert reply is not None
    whole = (time.perf_counter() - start) * 1000
    session.add(reply.record)
    grounding = reply.record.grounding if isinstance(reply.record.grounding, Grounding) else None
    row: dict[str, Any] = {
        "text": reply.text,
        "first": ((first or time.perf_counter()) - start) * 1000,
        "whole": whole,
        "understand": reply.timings.get("understand_ms", 0.0),
        "fallback": grounding.fallback if grounding else None,
        "llm": bool(timed.calls),
        "language": language,
    }
    if timed.calls:
        call = timed.calls[0]
        got = call.get("first", time.perf_counter())
        row["prompt_ms"] = (got - call["start"]) * 1000
        row["hold_ms"] = ((first or got) - got) * 1000
        row["prompt"] = call.get("prompt", 0)
        row["decode_tokens"] = sum(max(0, c.get("tokens", 0) - 1) for c in timed.calls if "first" in c)
        row["decode_s"] = sum(c["end"] - c["first"] for c in timed.calls if "first" in c)
        row["reused"] = call.get("reused", float("nan"))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev",), default="dev", help="dev only: the test half is not for tuning")
    parser.add_argument("--sample", type=int, default=3, help="conversations per language")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    systems = build_systems(SystemConfig(generator=ComponentSpec("extractive"), grounded=True))
    for system in systems.values():
        system.warm_up()
    names = args.variants.split(",")
    models = {}
    for name in names:
        prefix_cache, _, _, turn_cache, prompt_turns = VARIANTS[name]
        generator = LlamaCppGenerator(
            n_ctx=2048,
            n_threads=args.threads,
            prefix_cache=prefix_cache,
            turn_cache=turn_cache,
            prompt_turns=prompt_turns,
        )
        generator.warm_up()
        models[name] = Timed(generator)
        if VARIANTS[name][2]:
            for system in systems.values():
                system.knowledge_branch.generator = generator
                system.knowledge_branch.warm_up()
    rows = load_set(args.split, args.sample, args.seed)
    zh, en = [r for r in rows if r["language"] == "zh"], [r for r in rows if r["language"] == "en"]
    # the languages alternate turn by turn: one conversation of each at a time, as two users of one service
    pairs = list(zip(zh, en, strict=False))
    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {name: [] for name in names}
    for pair in pairs:
        sessions = {
            name: [
                systems[r["language"]].new_session(None if r["profile"] == "demo-guest" else r["profile"]) for r in pair
            ]
            for name in names
        }
        for step in range(max(len(r["turns"]) for r in pair)):
            for index, row in enumerate(pair):
                if step >= len(row["turns"]):
                    continue
                for name in names:
                    text = row["turns"][step]["user"]
                    results[name].append(
                        ask(systems, models[name], VARIANTS[name][1], sessions[name][index], row["language"], text)
                    )
    load_after = os.getloadavg()
    turns = len(results[names[0]])
    print(
        f"split {args.split}: {len(pairs)} conversation pairs (zh and en alternating, seed {args.seed}), "
        f"{turns} turns, {args.threads} threads; load average before {load_before[0]:.1f}, after {load_after[0]:.1f}\n"
    )
    print(
        "| variant | LLM turns | first token p50 (ms) | first LLM turn zh / en (ms) | understand p50 | prompt p50 "
        "| hold p50 | whole turn p50 / p95 (ms) | decode tok/s | prompt tokens (from cache) | truncated "
        "| same reply as first |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    reference = results[names[0]]
    for name in names:
        llm = [r for r in results[name] if r["llm"]]
        same = sum(r["text"] == ref["text"] for r, ref in zip(results[name], reference, strict=True))
        reused = sum(r["reused"] for r in llm)
        firsts = " / ".join(f"{next((r['first'] for r in llm if r['language'] == x), 0):.0f}" for x in ("zh", "en"))
        seconds = sum(r["decode_s"] for r in llm)
        print(
            f"| {name} | {len(llm)} | {Latency.of([r['first'] for r in llm]).p50:.0f} | {firsts} | "
            f"{Latency.of([r['understand'] for r in llm]).p50:.0f} | "
            f"{Latency.of([r['prompt_ms'] for r in llm]).p50:.0f} | "
            f"{Latency.of([r['hold_ms'] for r in llm]).p50:.0f} | "
            f"{Latency.of([r['whole'] for r in llm]).p50:.0f} / {Latency.of([r['whole'] for r in llm]).p95:.0f} | "
            f"{sum(r['decode_tokens'] for r in llm) / seconds if seconds else 0:.1f} | {sum(r['prompt'] for r in llm)} "
            f"({'n/a' if reused != reused else int(reused)}) | {sum(r['fallback'] == 'truncated' for r in llm)} | "
            f"{same}/{turns} |"
        )
    for model in models.values():
        model.inner.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
