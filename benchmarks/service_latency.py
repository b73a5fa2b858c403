"""End-to-end per-turn latency and tokens/s of the dialog service through its HTTP API, on the demo knowledge base.

Starts ``ragdial serve`` on 127.0.0.1 (a fresh SQLite session store), asks the user turns of the bundled demo
dialogs (Chinese and English, each demo user in their own session, streamed), and measures on the client:
- retrieval: the server's retrieve_ms (sent in the first SSE chunk) and the client's time to that chunk,
- first token: time from sending the request to the first content chunk,
- full reply: time to the final chunk,
- tokens/s: completion tokens / (full reply - first token) per turn, and over the run; prompt tokens per turn,
- start: from launching the process to ``/healthz`` answering ok (every component loaded and warmed) and to the end
  of the first reply (the first warm-up turn: a real question, streamed like the others), and the CPU time the
  server process used by then (all threads; less moved by other processes' load than the wall time).
Prints a markdown table.

    PYTHONPATH=src python benchmarks/service_latency.py --generator template --turns 60
    PYTHONPATH=src python benchmarks/service_latency.py --generator llama --turns 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from ragdial.evaluation.latency import Latency

ROOT = Path(__file__).resolve().parent.parent


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _questions(limit: int) -> list[tuple[str, str, str]]:
    """(language, demo user, question) from the demo dialogs, alternating languages."""
    from ragdial.datasets.mobilecs2 import load_demo

    per_language = {}
    for language in ("zh", "en"):
        dataset = load_demo(language)
        per_language[language] = [(language, e.dialog_id, e.last_user_text) for e in dataset.examples]
    mixed = [q for pair in zip(per_language["zh"], per_language["en"], strict=False) for q in pair]
    return (mixed * (limit // max(len(mixed), 1) + 1))[:limit]


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process has used so far; NaN where /proc is not there. Less moved
    by other processes' load than wall time: the start's work, not its wait for a core."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _turn(client: httpx.Client, url: str, session: str, question: str) -> dict[str, float]:
    body = {"messages": [{"role": "user", "content": question}], "session_id": session, "stream": True}
    start = time.perf_counter()
    first_chunk = first_token = None
    tokens = prompt = 0
    server: dict = {}
    with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if "error" in chunk:
                raise RuntimeError(chunk["error"]["message"])
            now = time.perf_counter()
            if first_chunk is None:
                first_chunk = now
                server["retrieve_ms"] = chunk["ragdial"]["timings"]["retrieve_ms"]
            if chunk["choices"][0]["delta"].get("content"):
                first_token = first_token or now
            if chunk["choices"][0]["finish_reason"]:
                tokens = chunk["usage"]["completion_tokens"]
                prompt = chunk["usage"]["prompt_tokens"]
    end = time.perf_counter()
    first_token = first_token or end
    first_chunk = first_chunk or end
    decode = end - first_token
    return {
        "retrieve_ms": server["retrieve_ms"],
        "knowledge_chunk_ms": (first_chunk - start) * 1000,
        "first_token_ms": (first_token - start) * 1000,
        "full_ms": (end - start) * 1000,
        "tokens": tokens,
        "prompt_tokens": prompt,
        "decode_s": decode,
        "tokens_per_s": (tokens - 1) / decode if tokens > 1 and decode > 0 else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", default="auto", help="auto, template, llama, ... (default auto)")
    parser.add_argument("--retriever", default="auto", help="auto, bm25, hybrid")
    parser.add_argument("--turns", type=int, default=40, help="measured turns")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured turns first")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--budget", type=float, default=1800, help="stop asking after this many seconds")
    parser.add_argument("--json", type=Path, help="also write the raw measurements here")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the ragdial source the server runs (A/B)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the server is stopped on a kill too
    load_before = os.getloadavg()[0]

    tmp = Path(tempfile.mkdtemp(prefix="ragdial-bench-"))
    config = {
        "retriever": {"name": args.retriever, "query": "last_user"},
        "generator": args.generator,
        "max_tokens": args.max_tokens,
    }
    (tmp / "system.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = _port()
    launched = time.perf_counter()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    command = [
        sys.executable,
        "-c",
        "from ragdial.cli import main; main()",
        "serve",
        "--config",
        str(tmp / "system.yaml"),
    ]
    command += ["--db", str(tmp / "sessions.sqlite"), "--port", str(port), "--log-level", "warning"]
    with open(tmp / "server.log", "wb") as log:
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        with httpx.Client(timeout=600) as client:
            deadline = time.monotonic() + 600
            while True:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"server did not start: {(tmp / 'server.log').read_text()[-2000:]}")
                try:
                    health = client.get(f"{url}/healthz").json()
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)
            ready_s = time.perf_counter() - launched
            ready_cpu = _cpu_seconds(server.pid)
            first_reply_s = first_reply_cpu = None
            sessions: dict[tuple[str, str], str] = {}
            profiles = {p["id"] for p in client.get(f"{url}/v1/profiles").json()["profiles"]}
            rows: list[dict[str, Any]] = []
            questions = _questions(args.turns + args.warmup)
            started = time.monotonic()
            for index, (language, user, question) in enumerate(questions):
                if time.monotonic() - started > args.budget:
                    print(f"time budget of {args.budget:.0f} s spent: {len(rows)} turns measured", file=sys.stderr)
                    break
                key = (language, user)
                if key not in sessions:
                    body = {"profile": user if user in profiles else None, "language": language}
                    created = client.post(f"{url}/v1/sessions", json=body)
                    created.raise_for_status()
                    sessions[key] = created.json()["id"]
                measured = _turn(client, url, sessions[key], question)
                if first_reply_s is None:
                    first_reply_s, first_reply_cpu = time.perf_counter() - launched, _cpu_seconds(server.pid)
                if index >= args.warmup:
                    rows.append(measured)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)  # its config, session store and log (a failed start printed the log)

    components = health["components"]["zh"]
    print(
        f"generator {components['generator']}, retriever {components['retriever']}, {len(rows)} turns, "
        f"max_tokens {args.max_tokens}, {os.cpu_count()} CPUs, {platform.python_version()}, "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    first = first_reply_s or float("nan")
    print(f"start: ready after {ready_s:.2f} s, first reply delivered {first:.2f} s after launch")
    first_cpu = first_reply_cpu if first_reply_cpu is not None else float("nan")
    print(f"start CPU: the server used {ready_cpu:.2f} s of CPU until ready, {first_cpu:.2f} s until the first reply")
    print()
    print("| per turn (ms) | p50 | p95 |")
    print("|---|---:|---:|")
    for field, label in [
        ("retrieve_ms", "retrieval (server)"),
        ("knowledge_chunk_ms", "cited knowledge received"),
        ("first_token_ms", "first token"),
        ("full_ms", "full reply"),
    ]:
        summary = Latency.of(r[field] for r in rows)
        print(f"| {label} | {summary.p50:.1f} | {summary.p95:.1f} |")
    tokens = sum(r["tokens"] - 1 for r in rows if r["tokens"] > 1)
    decode = sum(r["decode_s"] for r in rows if r["tokens"] > 1)
    per_turn = [r["tokens_per_s"] for r in rows if r["tokens"] > 1 and r["decode_s"] > 0]
    print()
    print("| tokens/s | value |")
    print("|---|---:|")
    print(f"| over the run (decode) | {tokens / decode if decode else float('nan'):.1f} |")
    if per_turn:
        print(f"| per turn p50 | {Latency.of(per_turn).p50:.1f} |")
    print(f"| tokens per reply (mean) | {statistics.mean(r['tokens'] for r in rows):.1f} |")
    print(
        f"| prompt tokens per turn (mean; the model's prompt, cached head included) | "
        f"{statistics.mean(r['prompt_tokens'] for r in rows):.1f} |"
    )
    if args.json:
        args.json.write_text(json.dumps({"config": config, "health": health, "rows": rows}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
