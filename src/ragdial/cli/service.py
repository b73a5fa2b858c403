"""``ragdial chat``, ``ragdial serve``, ``ragdial demo``: the dialog system on the terminal and over HTTP."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragdial.errors import RagdialError
from ragdial.paths import cache_dir
from ragdial.pipeline.components import build_system
from ragdial.pipeline.config import ComponentSpec, SystemConfig, load_config
from ragdial.pipeline.grounded import Grounding
from ragdial.pipeline.system import DialogSystem
from ragdial.pipeline.turn import Piece, Prepared, Reply

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="system config YAML (default: the demo KB)")]
GeneratorOpt = Annotated[
    str | None, typer.Option(help="override the generator: auto, template, llama, openai or module:factory")
]
RetrieverOpt = Annotated[str | None, typer.Option(help="override the retriever: auto, bm25, hybrid or module:factory")]
SOURCE_LABELS = {"user_profile": "user profile", "product": "product", "faq": "FAQ"}


def _config(path: Path | None, retriever: str | None = None, generator: str | None = None) -> SystemConfig:
    config = load_config(path)
    if retriever:
        config.retriever = ComponentSpec(retriever)
    if generator:
        config.generator = ComponentSpec(generator)
    return config


def chat(
    config: ConfigOpt = None,
    language: Annotated[str | None, typer.Option("--language", "-l", help="zh or en")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="the user whose profile to look up")] = None,
    retriever: RetrieverOpt = None,
    generator: GeneratorOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="print each reply as one JSON line")] = False,
) -> None:
    """Talk to the dialog system; each reply shows the knowledge it cites. Commands: /profiles, /profile ID,
    /reset, /quit."""
    system_config = _config(config, retriever, generator)
    language = language or system_config.languages[0]
    console = Console(stderr=json_)
    with console.status("building the dialog system (index, models) ..."):
        system = build_system(system_config, language)
        system.warm_up()
    if profile is not None and system.knowledge.user(profile) is None:
        raise RagdialError(f"unknown profile {profile!r}; known: {', '.join(u.id for u in system.users)}")
    session = system.new_session(profile or (system.users[0].id if system.users else None))
    if not json_:
        console.print(f"[bold]ragdial chat[/] ({language}); profile: {session.user or 'none'}; /quit to leave")
    while True:
        try:
            text = input("" if json_ else "you> ")
        except (EOFError, KeyboardInterrupt):
            if not json_:
                console.print()
            break
        text = text.strip()
        if not text:
            continue
        if text.startswith("/"):
            if not _command(system, session, text, console):
                break
            continue
        if len(text) > system_config.max_message_chars:
            console.print(f"[red]message too long ({len(text)} > {system_config.max_message_chars} characters)[/]")
            continue
        _turn(system, session, text, console, json_)


def _command(system: DialogSystem, session, text: str, console: Console) -> bool:
    name, _, arg = text.partition(" ")
    if name in ("/quit", "/exit"):
        return False
    if name == "/profiles":
        for user in system.users:
            console.print(f"  {user.id}  {user.name}  {user.summary[:60]}")
    elif name == "/profile":
        if system.knowledge.user(arg.strip()) is None:
            console.print(f"[red]unknown profile {arg.strip()!r}[/]")
        else:
            session.user, session.history = arg.strip(), []
            console.print(f"profile {session.user}; history cleared")
    elif name == "/reset":
        session.history = []
        console.print("history cleared")
    else:
        console.print("commands: /profiles, /profile ID, /reset, /quit")
    return True


def _turn(system: DialogSystem, session, text: str, console: Console, json_: bool) -> None:
    if not json_:
        console.print("bot> ", end="")
    for event in system.stream(session, text):
        if isinstance(event, Piece) and not json_:
            console.print(event.text, end="", markup=False, highlight=False)
        elif isinstance(event, Prepared):
            pass
        elif isinstance(event, Reply):
            session.add(event.record)
            if json_:
                typer.echo(json.dumps(event.to_dict(), ensure_ascii=False))
                continue
            console.print()
            _citations(event, console)


def _citations(reply: Reply, console: Console) -> None:
    decision = reply.decision
    lookups = ", ".join(decision.lookups if decision.needs_knowledge else ()) or "none"
    timing = ", ".join(f"{k.removesuffix('_ms')} {v:.0f} ms" for k, v in reply.timings.items())
    console.print(f"[dim]needs knowledge: {decision.needs_knowledge}; look-ups: {lookups}; {timing}[/]")
    grounding = reply.record.grounding
    if isinstance(grounding, Grounding):
        rewrite = grounding.rewrite
        query = f"; searched: {rewrite.text}" if rewrite and rewrite.text != rewrite.original else ""
        if grounding.verified:
            verdict = f"verified ({len(grounding.check.claims)} claims)"
        else:
            verdict = "unsupported: " + ", ".join(c.text for c in grounding.check.unsupported)
        fallback = f"; fallback: {grounding.fallback}" if grounding.fallback else ""
        line = f"policy: {grounding.policy}{query}; {verdict}{fallback}"
        console.print(f"[dim]{escape(line)}[/]")
    if not reply.knowledge:
        return
    table = Table(show_header=True, header_style="dim", box=None, padding=(0, 1))
    table.add_column("#", style="dim")
    table.add_column("source")
    table.add_column("id", style="dim")
    table.add_column("knowledge", overflow="fold")
    for rank, citation in enumerate(reply.knowledge, 1):
        table.add_row(str(rank), SOURCE_LABELS.get(citation.source, citation.source), citation.id, citation.text)
    console.print(table)


def serve(
    config: ConfigOpt = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="worker processes (each builds its own index and model)")] = 1,
    db: Annotated[
        str | None,
        typer.Option(
            help="session store: a SQLite file or postgresql://user:pw@host/db (default: SQLite in the cache)"
        ),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="RAGDIAL_API_KEY", help="require 'Authorization: Bearer KEY' on /v1")
    ] = None,
    retriever: RetrieverOpt = None,
    generator: GeneratorOpt = None,
    ratings: Annotated[
        Path | None, typer.Option(help="also serve the human rating pages (/rating), storing into this SQLite file")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    concurrency: Annotated[int, typer.Option(min=1, help="turns a worker answers at once")] = 1,
    queue_limit: Annotated[int, typer.Option(min=0, help="turns that may wait per worker; more get 503")] = 64,
    queue_wait: Annotated[float, typer.Option(min=0.01, help="seconds a turn may wait; then 503")] = 30.0,
    time_limit: Annotated[float, typer.Option(min=0.01, help="seconds a turn may take; then it is stopped")] = 120.0,
) -> None:
    """Serve the HTTP API (OpenAI-compatible /v1/chat/completions, /v1/retrieve, sessions) and the web page."""
    from ragdial.serve.admission import QueueLimits
    from ragdial.serve.runner import check_port
    from ragdial.serve.runner import serve as run_server
    from ragdial.serve.service import Service, ServiceSettings

    check_port(host, port)  # before loading anything: a port in use is one line, not a model load and a crash
    system_config = _config(config, retriever, generator)
    db_path = str(db or cache_dir() / "service" / "sessions.sqlite")
    limits = QueueLimits(concurrency, queue_limit, queue_wait, time_limit)
    settings = ServiceSettings(
        system_config, db_path, api_key, ratings_path=str(ratings) if ratings else None, queue=limits
    )
    service = None
    if workers > 1:  # the workers build their own; an unreachable database fails here with one line, migrated once
        from ragdial.pipeline.components import prepare_milvus
        from ragdial.serve.stores import open_store

        open_store(db_path).close()
        if system_config.retriever.name == "milvus":  # index once here, not in every worker at the same time
            prepare_milvus(system_config, processes=workers)
    if workers == 1:  # build here, so a bad config or a missing model fails with one line before listening
        typer.echo("ragdial serve: building the dialog system ...", err=True)
        service = Service(settings)
    run_server(settings, host, port, workers, log_level, service)


def demo(
    port: Annotated[int, typer.Option(help="port")] = 8000,
    generator: GeneratorOpt = None,
    db: Annotated[Path | None, typer.Option(help="SQLite session store")] = None,
) -> None:
    """Serve the bundled demo knowledge base on 127.0.0.1 (the offline GGUF where installed, else templates)."""
    from ragdial.serve.runner import check_port
    from ragdial.serve.runner import serve as run_server
    from ragdial.serve.service import Service, ServiceSettings

    check_port("127.0.0.1", port)
    url = f"http://127.0.0.1:{port}/"
    db_path = db or cache_dir() / "demo" / "sessions.sqlite"
    settings = ServiceSettings(_config(None, None, generator), str(db_path), os.environ.get("RAGDIAL_API_KEY"))
    typer.echo(f"ragdial demo: building the dialog system over the demo knowledge base, then serving {url}")
    service = Service(settings)
    for language, system in service.systems.items():
        parts = f"retriever {type(system.retriever).__name__}, generator {type(system.generator).__name__}"
        typer.echo(f"ragdial demo: {language}: {len(system.knowledge.dataset.kb)} knowledge items, {parts}")
    typer.echo(f"ragdial demo: sessions in {db_path}; starting the server (it says when it is ready)")
    run_server(settings, "127.0.0.1", port, 1, "info", service)


def run(
    benchmark: Annotated[
        str,
        typer.Argument(
            help="a recipe (futuredial-track1/2, dstc9, dstc11, huawei, kdconv, smp2017, or a recipe .yaml) trained "
            "into --system, or a benchmark (demo, mobilecs2, dstc9, dstc11, huawei, kdconv) answered by --config"
        ),
    ],
    path: Annotated[Path | None, typer.Argument(help="test data file or folder (default: under $RAGDIAL_DATA)")] = None,
    config: ConfigOpt = None,
    system: Annotated[
        Path | None,
        typer.Option(help="a system folder written by `ragdial train RECIPE` (default: systems/RECIPE if there)"),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="override a run-time recipe option: KEY=VALUE (system.top_k=5, generator.name=llama)"
        ),
    ] = None,
    split: Annotated[str | None, typer.Option(help="split (default: the benchmark's evaluation split)")] = None,
    fold: Annotated[
        int | None, typer.Option(help="dialog-grouped fold 0-4 to run (-1: all; default: DSTC11 0, else all)")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="run a sample of N examples (drawn with --seed)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the --limit sample")] = 0,
    language: Annotated[str, typer.Option(help="demo: zh or en")] = "zh",
    out: Annotated[Path | None, typer.Option(help="output folder (default: runs/<benchmark>)")] = None,
    retriever: RetrieverOpt = None,
    generator: GeneratorOpt = None,
    meteor: Annotated[bool, typer.Option(help="DSTC11: METEOR 1.5 (needs Java)")] = True,
    bertscore: Annotated[bool, typer.Option(help="MobileCS2: track-2 scores (BERTScore needs torch)")] = True,
) -> None:
    """Run the whole pipeline over test data: the official submission file(s), scored when the data has gold
    (unlabelled input is format-checked and not scored)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ragdial import recipes
    from ragdial.challenges import ScoreOptions
    from ragdial.cli.eval import report
    from ragdial.evaluation import run_benchmark
    from ragdial.recipes.running import default_system, run_recipe, trained_recipe

    is_recipe = benchmark in recipes.names() or benchmark.endswith((".yaml", ".yml"))
    if system is None and config is None and is_recipe and (default_system(benchmark) / "system.yaml").is_file():
        system = default_system(benchmark)
    if system is None and is_recipe and benchmark not in _benchmark_names():
        raise RagdialError(
            f"{benchmark}: no trained system; train one first: ragdial train {benchmark} --out "
            f"{default_system(benchmark)} (then --system {default_system(benchmark)})"
        )
    if system is not None and (config is not None or retriever or generator):
        raise RagdialError("--system runs a trained recipe: override its options with --set, not --config/--retriever")
    if set_ and system is None:
        raise RagdialError("--set overrides a recipe's options: give --system DIR (a folder of `ragdial train`)")
    console = Console(stderr=True)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    tokens = {"n": 0, "ms": 0.0}
    use_fold = None if fold is not None and fold < 0 else fold
    options = ScoreOptions(meteor=meteor, bertscore=bertscore)
    with Progress(*columns, TextColumn("{task.fields[rate]}"), console=console) as progress:
        task = progress.add_task(benchmark, total=None, rate="building the dialog system")

        def start(dataset, examples) -> None:
            progress.update(task, description=f"{benchmark} {dataset.split}", total=len(examples))

        def advance(example, reply: Reply | None) -> None:
            if reply is None:  # a classification without a reply (SMP2017 intent)
                progress.update(task, advance=1, rate="")
                return
            tokens["n"] += reply.tokens
            tokens["ms"] += reply.timings["generate_ms"]
            rate = tokens["n"] / (tokens["ms"] / 1000) if tokens["ms"] > 0 else 0.0
            progress.update(task, advance=1, rate=f"{rate:,.1f} tokens/s")

        if system is not None:
            recipe = trained_recipe(system, benchmark if is_recipe else None, set_ or [])
            done = run_recipe(recipe, system, path, out, split, fold, limit, seed, start, advance, options)
        else:
            done = run_benchmark(
                benchmark,
                _config(config, retriever, generator),
                path,
                split,
                0 if fold is None else use_fold,
                limit,
                language,
                out,
                seed,
                on_start=start,
                on_reply=advance,
                options=options,
                any_fold=fold is not None and fold >= 0,
            )
    for result in done.result.challenge_scores:
        report(result, False, None)
    gold = {k.partition(".")[2]: v for k, v in done.result.scores.items() if k.startswith("gold_detection.")}
    if gold:
        typer.echo(
            f"selection with gold detection (detector=null, the {gold['turns']:.0f} turns whose gold uses knowledge): "
            f"P {gold['P']:.4f} R {gold['R']:.4f} F1 {gold['F1']:.4f} EM {gold['EM']:.4f}"
            f" R@1 {gold['R@1']:.4f} R@5 {gold['R@5']:.4f}"
        )
    for line in done.result.checks:
        typer.echo(f"official format check: {line}")
    if not done.scored:
        typer.echo(f"not scored: the input has no gold ({done.result.counts['examples']} unlabelled examples)")
    speed = done.speed
    rate = f", {speed['tokens_per_s']:.1f} tokens/s" if speed["tokens"] else ""
    typer.echo(
        f"{speed['turns']} turns{rate}, per turn p50 {speed['total_ms_p50']:.0f} ms"
        f" / p95 {speed['total_ms_p95']:.0f} ms"
    )
    typer.echo(f"wrote {', '.join(str(p) for p in done.result.files)}")


def _benchmark_names() -> list[str]:
    from ragdial.challenges import BENCHMARKS

    return list(BENCHMARKS)


def register(app: typer.Typer) -> None:
    """Add the service commands to the ``ragdial`` app."""
    app.command()(chat)
    app.command()(serve)
    app.command()(demo)
    app.command()(run)
