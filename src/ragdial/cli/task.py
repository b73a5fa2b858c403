"""``ragdial task``: build the travel database, search it, and chat with the task branch."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated

import typer

from ragdial.errors import RagdialError

app = typer.Typer(no_args_is_help=True, help="Task branch: flight/train/hotel database and slot-filling dialog.")
DbOpt = Annotated[str | None, typer.Option("--db", help="database path or sqlite:/// URL (default: the cache)")]


@app.command("make-db")
def make_db(
    out: Annotated[Path | None, typer.Option(help="SQLite file to write (default: <cache>/task/travel.sqlite)")] = None,
    seed: Annotated[int, typer.Option(help="random seed")] = 0,
    start: Annotated[str, typer.Option(help="first date of the timetables (YYYY-MM-DD)")] = "2026-12-01",
    days: Annotated[int, typer.Option(help="number of days")] = 30,
) -> None:
    """Generate flight, train and hotel tables for ``days`` days from ``start`` (same seed, same rows)."""
    from ragdial.task.db import default_db_path
    from ragdial.task.dbgen import generate

    try:
        first = dt.date.fromisoformat(start)
    except ValueError as err:
        raise RagdialError(f"--start {start!r}: not a date YYYY-MM-DD") from err
    if days < 1:
        raise RagdialError("--days must be at least 1")
    path = out or default_db_path()
    counts = generate(path, seed=seed, start=first, days=days)
    typer.echo(f"wrote {path}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))


@app.command()
def search(
    domain: Annotated[str, typer.Argument(help="flight, train or hotel")],
    where: Annotated[list[str], typer.Argument(help="constraints key=value, e.g. dep_city=北京 date=2026-12-02")],
    db: DbOpt = None,
    limit: int = 5,
) -> None:
    """Query the database directly (cheapest first), as JSON lines."""
    from ragdial.task.db import TravelDB

    constraints = {}
    for pair in where:
        key, sep, value = pair.partition("=")
        if not sep:
            raise RagdialError(f"constraint {pair!r}: expected key=value")
        constraints[key] = int(value) if value.isdigit() else value
    for row in TravelDB(db).search(domain, constraints, limit=limit):
        typer.echo(json.dumps(row, ensure_ascii=False))


@app.command()
def chat(
    db: DbOpt = None,
    today: Annotated[str | None, typer.Option(help="current date for 今天/明天 (default: first DB date)")] = None,
) -> None:
    """Talk to the task branch in the terminal (bookings go to a scratch copy of the database)."""
    from ragdial.task.db import TravelDB
    from ragdial.task.manager import TaskBranch

    branch = TaskBranch(TravelDB(db, scratch=True), today=dt.date.fromisoformat(today) if today else None)
    state = None
    typer.echo("(empty line to quit)")
    while True:
        text = typer.prompt("you", default="", show_default=False)
        if not text.strip():
            return
        turn = branch.respond(state, text)
        state = turn.state
        typer.echo(f"system: {turn.reply}")
        if turn.done:
            return


@app.command()
def rate(
    store: Annotated[Path, typer.Option(help="SQLite file for the ratings")] = Path("runs/ratings.sqlite"),
    db: DbOpt = None,
    host: str = "127.0.0.1",
    port: int = 8008,
) -> None:
    """Serve only the human rating pages (/rating/online, /rating/offline, /rating/export.json)."""
    import uvicorn

    from ragdial.rating import rating_app

    app_ = rating_app(store, db)
    typer.echo(f"rating pages on http://{host}:{port}/rating/")
    uvicorn.run(app_, host=host, port=port, log_level="warning")


@app.command("import-outputs")
def import_outputs(
    path: Annotated[Path, typer.Argument(help="JSON list of {context, response, knowledge?, source?, system?}")],
    store: Annotated[Path, typer.Option(help="SQLite file for the ratings")] = Path("runs/ratings.sqlite"),
) -> None:
    """Add system outputs to be rated offline."""
    from ragdial.io import read_json
    from ragdial.rating.store import RatingStore

    items = read_json(path)
    if not isinstance(items, list):
        raise RagdialError(f"{path}: expected a JSON list of items")
    ids = RatingStore(store).add_items(items)
    typer.echo(f"added {len(ids)} items to {store}")


@app.command("export-ratings")
def export_ratings(
    store: Annotated[Path, typer.Option(help="SQLite file for the ratings")] = Path("runs/ratings.sqlite"),
    out: Annotated[Path, typer.Option(help="folder for ratings.json, online.csv, offline.csv")] = Path("runs/ratings"),
) -> None:
    """Write ratings as JSON (with means and Krippendorff's alpha) and CSV."""
    from ragdial.rating.store import RatingStore

    ratings = RatingStore(store)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ratings.json").write_text(json.dumps(ratings.export_json(), ensure_ascii=False, indent=2), encoding="utf-8")
    for kind in ("online", "offline"):
        (out / f"{kind}.csv").write_text(ratings.export_csv(kind), encoding="utf-8")
    typer.echo(json.dumps(ratings.summary(), ensure_ascii=False, indent=2))
