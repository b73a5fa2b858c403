"""The worker's counters and the ``/metrics`` page in the Prometheus text format (version 0.0.4).

Each worker process counts its own turns; every sample carries a ``worker`` label (the process id), so a scrape
that lands on any worker is labelled, and a stuck or saturated worker shows in its own series.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ragdial.serve.admission import WAIT_BUCKETS, GenerationQueue

TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
OUTCOMES = ("completed", "stopped", "disconnected", "timeout", "shutdown", "error", "refused")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Metrics:
    """Turn outcomes, token counts and turn durations of this worker."""

    turns: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    turn_sum_s: float = 0.0
    turn_buckets: list[int] = field(default_factory=lambda: [0] * len(TURN_BUCKETS))

    def turn(self, outcome: str, seconds: float | None = None, prompt: int = 0, completion: int = 0) -> None:
        """Count one chat request's outcome (one of ``OUTCOMES``), its duration and tokens."""
        self.turns[outcome] += 1
        self.tokens["prompt"] += prompt
        self.tokens["completion"] += completion
        if seconds is not None:
            self.turn_sum_s += seconds
            for i, bound in enumerate(TURN_BUCKETS):
                if seconds <= bound:
                    self.turn_buckets[i] += 1

    def render(self, queue: GenerationQueue) -> str:
        """Every metric in the Prometheus text format."""
        worker = f'worker="{os.getpid()}"'
        lines: list[str] = []

        def metric(name: str, kind: str, text: str, samples: list[tuple[str, float]]) -> None:
            lines.append(f"# HELP {name} {text}")
            lines.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                joined = ",".join(part for part in (worker, labels) if part)
                lines.append(f"{name}{{{joined}}} {_number(value)}")

        limits, stats = queue.limits, queue.stats
        metric("ragdial_generation_slots", "gauge", "Turns this worker answers at once.", [("", limits.slots)])
        metric("ragdial_generation_running", "gauge", "Turns being answered now.", [("", queue.running)])
        metric("ragdial_generation_waiting", "gauge", "Turns waiting for a slot.", [("", queue.waiting)])
        metric("ragdial_generation_waiting_limit", "gauge", "Most turns that may wait.", [("", limits.max_waiting)])
        metric(
            "ragdial_generation_oldest_wait_seconds", "gauge", "Age of the longest wait.", [("", queue.oldest_wait_s())]
        )
        metric(
            "ragdial_generation_oldest_turn_seconds",
            "gauge",
            "Age of the longest running turn (a stuck worker shows here).",
            [("", queue.oldest_turn_s())],
        )
        metric(
            "ragdial_generation_refused_total",
            "counter",
            "Requests refused with 503 by the queue, by reason.",
            [(f'reason="{reason}"', count) for reason, count in sorted(stats.refused.items())],
        )
        _histogram(lines, worker, "ragdial_generation_wait_seconds", "Time turns waited for a slot.", WAIT_BUCKETS,
                   stats.wait_buckets, stats.admitted, stats.wait_sum_s)  # fmt: skip
        metric(
            "ragdial_turns_total",
            "counter",
            "Chat requests by outcome.",
            [(f'outcome="{outcome}"', self.turns[outcome]) for outcome in OUTCOMES],
        )
        metric(
            "ragdial_tokens_total",
            "counter",
            "Prompt and completion tokens of answered turns.",
            [(f'kind="{kind}"', self.tokens[kind]) for kind in ("prompt", "completion")],
        )
        answered = sum(self.turns[o] for o in OUTCOMES if o != "refused")
        _histogram(lines, worker, "ragdial_turn_seconds", "Time from admission to the end of a turn.", TURN_BUCKETS,
                   self.turn_buckets, answered, self.turn_sum_s)  # fmt: skip
        return "\n".join(lines) + "\n"


def _histogram(
    lines: list[str],
    worker: str,
    name: str,
    text: str,
    bounds: tuple[float, ...],
    cumulative: list[int],
    count: int,
    total: float,
) -> None:
    lines.append(f"# HELP {name} {text}")
    lines.append(f"# TYPE {name} histogram")
    for bound, value in zip(bounds, cumulative, strict=True):
        lines.append(f'{name}_bucket{{{worker},le="{_number(bound)}"}} {value}')
    lines.append(f'{name}_bucket{{{worker},le="+Inf"}} {count}')
    lines.append(f"{name}_sum{{{worker}}} {_number(total)}")
    lines.append(f"{name}_count{{{worker}}} {count}")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"
