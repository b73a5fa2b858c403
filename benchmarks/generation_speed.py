"""Generation speed on this machine: time to first token and decode tokens/s, median over N replies.

    PYTHONPATH=src python benchmarks/generation_speed.py --replies 20 [--backends template,llama,openai]

Requests are a seeded sample of Huawei valid system turns with their gold triples (Chinese, 1-3 triples,
the dialog so far), deterministic (temperature 0), at most 64 new tokens. "tokens" are the stream pieces: model
tokens for llama.cpp (one piece per sampled token, except multi-byte characters completed over two tokens) and for
the server; words / CJK characters for the template backend. The openai backend talks to llama-cpp-python's own
server started by this script on 127.0.0.1 with the same GGUF and 2 threads.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from generation_common import sample, split_folds
from ragdial import datasets
from ragdial.generation import create
from ragdial.generation.base import Generator
from ragdial.generation.batch import request_for
from ragdial.generation.model_files import resolve_model
from ragdial.generation.template import TemplateGenerator
from ragdial.paths import data_root


def measure(generator: Generator, requests) -> dict[str, float]:
    ttfts, rates, lengths = [], [], []
    for request in requests:
        started = time.perf_counter()
        first = None
        count = 0
        for _ in generator.stream(request):
            count += 1
            if first is None:
                first = time.perf_counter()
        ended = time.perf_counter()
        if first is None:
            continue
        ttfts.append(first - started)
        lengths.append(count)
        if count > 1 and ended > first:
            rates.append((count - 1) / (ended - first))
    return {
        "replies": len(ttfts),
        "median TTFT (s)": statistics.median(ttfts),
        "median decode tok/s": statistics.median(rates) if rates else float("nan"),
        "median tokens/reply": statistics.median(lengths),
    }


def start_server(model: Path, threads: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads), "--verbose", "false"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.5)
    process.terminate()
    raise RuntimeError("llama_cpp.server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=20)
    parser.add_argument("--backends", default="template,llama,openai")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    huawei = datasets.load("huawei", data_root() / "huawei_kdsd" / "valid.json")
    train, evaluate = split_folds(huawei)
    chosen = sample([e for e in evaluate if e.knowledge_ids], args.replies, seed=0)
    requests = [request_for(e, huawei, max_tokens=args.max_tokens) for e in chosen]
    rows = {}
    for backend in args.backends.split(","):
        if backend == "template":
            generator: Generator = TemplateGenerator.train(train, huawei.kb, "zh")
        elif backend == "llama":
            generator = create("llama", n_threads=args.threads)
            generator.generate(requests[0])  # load and warm up
        else:
            process, url = start_server(resolve_model(), args.threads)
            generator = create("openai", base_url=url)
            generator.generate(requests[0])
        try:
            rows[backend] = measure(generator, requests)
        finally:
            generator.close()
            if backend == "openai":
                process.terminate()
                process.wait(timeout=30)
    columns = next(iter(rows.values())).keys()
    print(
        f"Huawei valid fold 0, {args.replies} seeded replies, max {args.max_tokens} new tokens, "
        f"{args.threads} threads\n"
    )
    print("| backend | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for backend, row in rows.items():
        print(
            f"| {backend} | " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()) + " |"
        )


if __name__ == "__main__":
    main()
