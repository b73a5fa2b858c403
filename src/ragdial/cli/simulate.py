"""``ragdial simulate``: the user simulator against the task branch, SMP2017 task-2 metrics and dialog logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import track
from rich.table import Table


def simulate(
    goals: Annotated[int, typer.Option("--goals", help="number of user goals")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="seed for goals and user behaviour")] = 0,
    db: Annotated[str | None, typer.Option("--db", help="database path or sqlite:/// URL")] = None,
    noise: Annotated[float, typer.Option("--noise", help="ASR-style noise rate per character (0 = clean)")] = 0.0,
    out: Annotated[Path, typer.Option("--out", help="folder for dialogs.jsonl and metrics.json")] = Path(
        "runs/simulate"
    ),
    url: Annotated[str | None, typer.Option("--url", help="talk to a running ragdial server over HTTP instead")] = None,
) -> None:
    """Simulate N dialogs; print completion ratio, mean turns (unfinished = 30), guidance rate and booking-integrity
    errors (a booking the user did not confirm, or a confirmed one missing)."""
    from ragdial.errors import RagdialError
    from ragdial.task.simulation import simulate as run
    from ragdial.task.simulation import write_logs
    from ragdial.task.simulator import summarise

    if goals < 1:
        raise RagdialError("--goals must be at least 1")
    noise_fn = None
    if noise > 0:
        from ragdial.task.noise import asr_noise_function

        noise_fn = asr_noise_function(noise)
    factory = None
    if url:
        from ragdial.task.http_channel import HttpChannel

        def factory(_db):
            return HttpChannel(url)

    results = list(
        track(run(db, goals, seed, noise=noise_fn, channel_factory=factory), total=goals, description="dialogs")
    )
    metrics_path = write_logs(results, out)
    m = summarise(results)
    table = Table(title=f"simulated online test: {goals} goals, seed {seed}, noise {noise}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("task completion ratio", f"{m['completion_ratio']:.3f}")
    table.add_row("mean turns (unfinished = 30)", f"{m['mean_turns']:.2f}")
    guidance = "n/a" if m["guidance_rate"] is None else f"{m['guidance_rate']:.3f} ({m['off_topic_dialogs']} dialogs)"
    table.add_row("out-of-scope guidance", guidance)
    table.add_row("booking-integrity errors", f"{m['integrity_errors']} ({m['dialogs_with_integrity_errors']} dialogs)")
    Console().print(table)
    typer.echo(f"logs: {out / 'dialogs.jsonl'}, metrics: {metrics_path}")
