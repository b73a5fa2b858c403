"""Load on the dialog service: N concurrent sessions x T turns through the HTTP API, on several deployments, one run.

Deployments (each started in turn with ``ragdial serve`` on 127.0.0.1, never two at once):
- ``sqlite x1``: one process, sessions in a SQLite file (the single-machine default);
- ``sqlite x2``: two worker processes sharing that file;
- ``postgres x2``: two worker processes, sessions in PostgreSQL (a new database made on the server at
  ``--postgres URI``, else on a throwaway server started with ``scripts/postgres.sh``).
A suffix ``cN`` (``sqlite x2 c4``) serves with ``--concurrency N``: turns a worker answers at once (default 1; the
others wait in the worker's bounded queue, and a 503 from a full queue counts as an error).
Every deployment serves the bundled demo knowledge base (hybrid retrieval) with the template generator (so the
figures measure the service, not a model). Each session is created for a demo profile, then sends its T user turns
one after another (non-streamed and streamed alternately), each turn on a new connection, so with two workers the
turns of one session land on either. Afterwards every session is read back: a turn is lost when a user text sent
with a 200 answer is not stored, duplicated when it is stored twice. Latency is per turn, on the client; throughput
is completed turns per second of wall time. The machine's load average is recorded before and after each deployment.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/service_load.py --sessions 50 --turns 20

Writes ``docs/benchmarks/service_load.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from ragdial.evaluation import Latency

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks"
PROFILES = ("demo-u1", "demo-u2", "demo-u3", "demo-u4", "demo-u5", None)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _questions() -> list[str]:
    """User turns of the bundled demo dialogs (Chinese and English)."""
    from ragdial.datasets.mobilecs2 import load_demo

    return [e.last_user_text for language in ("zh", "en") for e in load_demo(language).examples]


class Server:
    def __init__(self, db: str, workers: int, log: Path, concurrency: int = 1) -> None:
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        command = [sys.executable, "-c", "from ragdial.cli import main; main()", "serve", "--generator", "template"]
        command += ["--db", db, "--workers", str(workers), "--port", str(self.port), "--log-level", "warning"]
        command += ["--concurrency", str(concurrency)]
        self.log = log
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait(self, timeout: float = 900.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"server not ready after {timeout} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)


def _turn(url: str, sid: str, text: str, stream: bool) -> tuple[int, float]:
    body = {"messages": [{"role": "user", "content": text}], "session_id": sid, "stream": stream}
    start = time.perf_counter()
    try:
        with httpx.Client(timeout=120) as client:  # a new connection per turn: any worker may answer
            if not stream:
                response = client.post(f"{url}/v1/chat/completions", json=body)
                status = response.status_code
            else:
                status = 0
                with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                    status = response.status_code
                    for line in response.iter_lines():
                        if line.startswith("data: ") and '"error"' in line:
                            status = 599  # an error reported in-band
    except httpx.HTTPError:
        status = -1
    return status, (time.perf_counter() - start) * 1000


def _session(url: str, number: int, turns: int, questions: list[str]) -> dict[str, Any]:
    profile = PROFILES[number % len(PROFILES)]
    created = httpx.post(f"{url}/v1/sessions", json={"profile": profile} if profile else {}, timeout=120)
    created.raise_for_status()
    sid = created.json()["id"]
    sent, results = [], []
    for turn in range(turns):
        text = f"{questions[(number * turns + turn) % len(questions)]} (#{number}.{turn})"
        status, ms = _turn(url, sid, text, stream=turn % 2 == 1)
        results.append((status, ms))
        if status == 200:
            sent.append(text)
    return {"id": sid, "sent": sent, "results": results}


def run(
    name: str,
    db: str,
    workers: int,
    sessions: int,
    turns: int,
    questions: list[str],
    log: Path,
    concurrency: int = 1,
) -> dict[str, Any]:
    load_before = round(os.getloadavg()[0], 1)
    server = Server(db, workers, log, concurrency)
    try:
        server.wait()
        start = time.perf_counter()
        with ThreadPoolExecutor(sessions) as pool:
            done = list(pool.map(lambda n: _session(server.url, n, turns, questions), range(sessions)))
        wall = time.perf_counter() - start
        lost = duplicated = 0
        for session in done:
            stored = httpx.get(f"{server.url}/v1/sessions/{session['id']}", timeout=120).json()["messages"]
            texts = [m["content"] for m in stored if m["role"] == "user"]
            lost += sum(1 for t in session["sent"] if t not in texts)
            duplicated += len(texts) - len(set(texts))
            if len(stored) != 2 * len(texts):
                duplicated += 1  # a user turn without its reply (or the reverse) counts as a broken turn
    finally:
        server.stop()
    statuses = [status for s in done for status, _ in s["results"]]
    latency = Latency.of(ms for s in done for status, ms in s["results"] if status == 200)
    return {
        "deployment": name,
        "workers": workers,
        "concurrency": concurrency,
        "sessions": sessions,
        "turns_per_session": turns,
        "turns": len(statuses),
        "errors": sum(1 for s in statuses if s != 200),
        "lost": lost,
        "duplicated": duplicated,
        "wall_s": round(wall, 1),
        "turns_per_s": round(latency.n / wall, 1),
        "p50_ms": round(latency.p50, 1),
        "p95_ms": round(latency.p95, 1),
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--postgres", default=os.environ.get("RAGDIAL_BENCH_POSTGRES"), help="postgresql:// URI")
    parser.add_argument("--deployments", default="sqlite x1,sqlite x2,postgres x2")
    parser.add_argument("--out", type=Path, default=DOCS / "service_load.json")
    args = parser.parse_args()
    questions = _questions()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragdial-load-") as tmp:
        folder = Path(tmp)
        pg_dir = None
        for deployment in args.deployments.split(","):
            kind, rest = deployment.strip().split(" x")
            workers, _, slots = rest.partition(" c")
            if kind == "sqlite":
                db = str(folder / f"{kind}{workers}c{slots or 1}.sqlite")
            else:
                if not args.postgres:
                    pg_dir = Path(tempfile.mkdtemp(prefix="ragdial-load-pg-"))
                    args.postgres = subprocess.run(
                        ["bash", str(ROOT / "scripts" / "postgres.sh"), "start", str(pg_dir)],
                        check=True,
                        capture_output=True,
                        text=True,
                    ).stdout.strip()
                db = _fresh_database(args.postgres)
            row = run(
                deployment.strip(),
                db,
                int(workers),
                args.sessions,
                args.turns,
                questions,
                folder / "server.log",
                int(slots or 1),
            )
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
        if pg_dir is not None:
            subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop", str(pg_dir)], check=False)
    report = {"generator": "template", "knowledge": "demo", "cores": os.cpu_count(), "rows": rows}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    keys = ["deployment", "turns", "errors", "lost", "duplicated", "turns_per_s", "p50_ms", "p95_ms", "load_before"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


def _fresh_database(url: str) -> str:
    """A new, empty database on the server at ``url`` (its role must be allowed to create one), for this run only."""
    import uuid
    from urllib.parse import urlsplit

    import psycopg

    name = f"ragdial_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(url)._replace(path=f"/{name}").geturl()


if __name__ == "__main__":
    main()
