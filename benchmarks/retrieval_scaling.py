"""Retrieval at scale: 12k, 100k and 1M knowledge items; in-process hybrid vs milvus-lite vs plain bm25s, one run.

Synthetic knowledge (``synthetic_items``, seeded): item ``i`` is base item ``i mod B`` of the DSTC9 test knowledge
(``dstc9_track1/knowledge_eval.json``: B = 12,039 FAQ snippets about 667 entities) in copy ``c = i div B``. Copy 0
is the original. In copy ``c >= 1`` the snippet is about a new entity: its name gets the suffix
``"<place word> <c>"`` (a place word from ``PLACES``, written for this benchmark, drawn by a generator seeded with
the seed, ``c`` and the entity), in the item's fields and wherever its text names the entity, and every number in
the text is redrawn by a generator seeded with the seed and ``i``. So 1M items are 83 copies of the KB about 55k
entities, with the snippets' own lengths and vocabulary and new rare words per entity.
Vectors: copy 0 has its text's USE embedding; copy ``c >= 1`` has that embedding plus seeded Gaussian noise
(sigma 0.02 per dimension, cosine about 0.9 to the original), L2-normalised. Encoding 1M texts with USE takes hours
on this shared machine: the measured encoding rate and the time it would take are reported instead, and a flat
(brute-force) dense search costs the same whatever the vectors hold. Result quality is not measured here.

Queries: ``--queries`` seeded base-item titles asked as one-turn contexts (most name no entity, so every item is
a candidate: the worst case, as in ``benchmarks/retrieval_speed.py``); top 20; p50/p95 over all queries after 5
warm-up queries, one query at a time. The hybrid retriever answers them twice: first as new texts (USE encodes each
query), then again with the query vectors cached (``cached_*``: retrieval alone). Above ``prune_above`` items it
shortlists (see ``RetrieverConfig``); ``--agreement`` queries are then also ranked with every candidate scored, and
the share of the exact top 20 the shortlisted ranking keeps is reported.

Systems, each in its own process (so its peak memory is its own):
- ``bm25s``: plain ``bm25s`` (Lucene BM25) over the same analyzer tokens, ``retrieve(k=20, n_threads=1)``.
- ``hybrid``: ragdial's in-process ``HybridRetriever`` (BM25 + USE, RRF). Written as an index directory by one
  process with ``write_index`` from the stream of synthetic items (never all in memory: items to ``items.jsonl``,
  BM25 from token ids, the vectors, the faiss dense index above ``prune_above`` items); served by another that loads
  it memory-mapped (``load_index``, what ``retriever: {name: index, path: …}`` serves) and answers the queries.
- ``milvus``: ragdial's ``MilvusRetriever`` on milvus-lite (a local file), or on the Milvus server ``--milvus-uri``
  names (a collection ``ragdial_scaling_<size>``, dropped after): BM25 over ragdial's tokens and FLAT inner product
  on the same vectors, each query turn searched and fused as in-process. Peak memory adds the milvus-lite server
  process (a remote server's is not seen).
Build steps stream the items in chunks with a text progress bar on stderr; the vectors are written to a ``.npy``
chunk by chunk and read back the same way (so the build's peak memory is ragdial's, not pages of the matrix).

Run in the background on a shared machine::

    OMP_NUM_THREADS=1 PYTHONPATH=src nohup python benchmarks/retrieval_scaling.py \\
        --sizes 12039,100000,1000000 --queries 200 > /tmp/retrieval_scaling.log 2>&1 &

Writes ``docs/benchmarks/retrieval_scaling.json`` (every row, the machine's load average around each step).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ragdial.datasets import dstc
from ragdial.evaluation import Latency
from ragdial.paths import data_root
from ragdial.schema import Knowledge, KnowledgeBase, Speaker, Turn

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
SYSTEMS = ("bm25s", "hybrid", "milvus")
SIGMA = 0.02
CHUNK = 20_000
PLACES = (
    "North", "South", "East", "West", "Harbour", "Garden", "Station", "Market", "Bridge", "Castle", "Meadow", "River",
    "Hill", "Park", "Square", "Abbey", "Quay", "Court", "Green", "Gate", "Mill", "Wharf", "Orchard", "Chapel",
    "Field", "Lane", "Crescent", "Terrace", "Row", "Yard", "Cross", "Vale", "Heath", "Common", "Fen", "Marsh",
    "Grove", "Wood", "Brook", "Ford", "Lock", "Pier", "Tower", "Hall", "Manor", "Priory", "Parade", "Circus",
)  # fmt: skip


# ---- the synthetic knowledge


def base_items(data: Path) -> list[Knowledge]:
    return list(dstc.load_knowledge(data / "dstc9_track1" / "knowledge_eval.json"))


def _renamer(name: str) -> re.Pattern[str]:
    bare = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
    return re.compile("|".join(re.escape(n) for n in sorted({name, bare}, key=len, reverse=True)), re.IGNORECASE)


def synthetic_item(base: Sequence[Knowledge], index: int, seed: int, patterns: dict[str, re.Pattern[str]]) -> Knowledge:
    """Item ``index`` of the synthetic knowledge (see the module docstring)."""
    item = base[index % len(base)]
    copy = index // len(base)
    if copy == 0:
        return item
    entity = str(item.fields.get("entity") or "")
    place = random.Random(f"{seed}:{copy}:{entity}").choice(PLACES)
    renamed = f"{entity.title()} {place} {copy}" if entity else ""
    numbers = random.Random(f"{seed}:{index}")

    def redraw(match: re.Match[str]) -> str:
        digits = len(match.group())
        return str(numbers.randint(10 ** (digits - 1) if digits > 1 else 0, 10**digits - 1))

    def rewrite(text: str) -> str:
        if entity:
            pattern = patterns.get(entity)
            if pattern is None:
                pattern = patterns[entity] = _renamer(entity)
            text = pattern.sub(renamed, text)
        return re.sub(r"\d+", redraw, text)

    fields = dict(item.fields)
    for key in ("title", "body"):
        if isinstance(fields.get(key), str):
            fields[key] = rewrite(str(fields[key]))
    if entity:
        fields["entity"] = renamed.upper()
    return Knowledge(f"{item.id}#{copy}", rewrite(item.text), item.source, fields, item.scope)


def synthetic_items(base: Sequence[Knowledge], size: int, seed: int = 0) -> Iterator[Knowledge]:
    patterns: dict[str, re.Pattern[str]] = {}
    for index in range(size):
        yield synthetic_item(base, index, seed, patterns)


def synthetic_vectors(base_vectors: np.ndarray, start: int, stop: int, seed: int = 0) -> np.ndarray:
    """Rows ``start:stop`` of the synthetic vectors (a chunk; the same rows whatever the chunking)."""
    count = len(base_vectors)
    rows = np.arange(start, stop)
    out = np.array(base_vectors[rows % count], dtype=np.float32)
    for row in range(start, stop):
        if row >= count:
            noise = np.random.default_rng([seed, row]).standard_normal(out.shape[1], dtype=np.float32)
            out[row - start] += SIGMA * noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


# ---- measuring


class Bar:
    """A text progress bar on stderr (one line every few seconds: readable in a log file)."""

    def __init__(self, label: str, total: int, every: float = 5.0) -> None:
        self.label, self.total, self.every = label, total, every
        self.done = 0
        self.start = self.shown = time.perf_counter()

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.shown >= self.every or self.done >= self.total:
            self.shown = now
            share = self.done / max(self.total, 1)
            bar = "#" * int(30 * share)
            print(
                f"  {self.label:<28} [{bar:<30}] {share:6.1%} {self.done:>9,}/{self.total:,} {now - self.start:7.1f} s",
                file=sys.stderr,
                flush=True,
            )


def peak_mb(extra_pids: Sequence[int] = ()) -> dict[str, float]:
    """This process's peak resident memory, and that of ``extra_pids`` (e.g. a milvus-lite server), in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    others = 0.0
    for pid in extra_pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    others += int(line.split()[1]) / 1024
        except OSError:
            pass
    return {"peak_mb": round(own + others, 1), "peak_mb_self": round(own, 1), "peak_mb_server": round(others, 1)}


def resident_mb() -> dict[str, float]:
    """This process's resident memory now, split into private (anonymous: Python objects, the faiss codes, the
    encoder) and file-backed (pages of memory-mapped files: the kernel's page cache, shared with every process
    mapping the same index and dropped under memory pressure), in MB."""
    fields = {"RssAnon": "rss_anon_mb", "RssFile": "rss_file_mb"}
    out = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in fields:
                out[fields[key]] = round(int(value.split()[0]) / 1024, 1)
    return out


def descendants() -> list[int]:
    """Process ids started (directly or not) by this process."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [os.getpid()]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def latencies(fn, queries: Sequence[str], budget: float | None = None) -> dict[str, float]:
    """p50/p95 over ``queries`` after 5 warm-up queries; with a ``budget`` (seconds), the queries stop once it is
    spent (at least 10 are measured), and ``queries`` says how many were."""
    for query in queries[:5]:
        fn(query)
    times: list[float] = []
    began = time.perf_counter()
    for query in queries:
        if budget is not None and len(times) >= 10 and time.perf_counter() - began > budget:
            break
        start = time.perf_counter()
        fn(query)
        times.append((time.perf_counter() - start) * 1000)
    summary = Latency.of(times)
    return {
        "queries": summary.n,
        "p50_ms": round(summary.p50, 2),
        "p95_ms": round(summary.p95, 2),
        "qps": round(1000 / summary.mean, 1),
    }


def agreement(retriever, queries: Sequence[str]) -> dict[str, float]:
    """How far the shortlisted ranking departs from scoring every candidate: mean share of the top 20 in common,
    and how often the first item is the same (the exact ranking costs a full BM25 and dense pass per query)."""
    shared, first = [], []
    for text in queries:
        pruned = [r.item.id for r in _ranked(retriever.retrieve(_turn(text), None, 20))]
        keep = retriever.config.shortlist
        retriever.config.shortlist = 0
        try:
            exact = [r.item.id for r in _ranked(retriever.retrieve(_turn(text), None, 20))]
        finally:
            retriever.config.shortlist = keep
        shared.append(len(set(pruned) & set(exact)) / max(len(exact), 1))
        first.append(float(bool(exact) and bool(pruned) and exact[0] == pruned[0]))
    return {
        "agreement_queries": len(queries),
        "top20_overlap": round(float(np.mean(shared)), 4) if shared else 0.0,
        "top1_same": round(float(np.mean(first)), 4) if first else 0.0,
    }


def load_average() -> float:
    return round(os.getloadavg()[0], 1)


def _ranked(result: Any) -> list[Any]:
    return list(getattr(result, "ranked", result))


def _turn(query: str) -> list[Turn]:
    return [Turn(Speaker.USER, query)]


# ---- one system at one size, in a child process


def _tokens(items_iter: Iterator[Knowledge], size: int, analyzer, label: str):
    """Token ids for every item (one shared vocabulary) and the items, built chunk by chunk."""
    from bm25s.tokenization import Tokenized

    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    items: list[Knowledge] = []
    bar = Bar(f"{label}: items + tokens", size)
    chunk: list[Knowledge] = []
    for item in items_iter:
        chunk.append(item)
        if len(chunk) == CHUNK:
            _add_tokens(chunk, analyzer, vocab, ids)
            items += chunk
            bar(len(chunk))
            chunk = []
    if chunk:
        _add_tokens(chunk, analyzer, vocab, ids)
        items += chunk
        bar(len(chunk))
    return Tokenized(ids=ids, vocab=vocab), items


def _add_tokens(chunk: Sequence[Knowledge], analyzer, vocab: dict[str, int], ids: list[list[int]]) -> None:
    for item in chunk:
        ids.append([vocab.setdefault(token, len(vocab)) for token in analyzer(item.text or "")])


def _vectors(path: Path, base_vectors: np.ndarray, size: int, seed: int, label: str) -> np.ndarray:
    """The synthetic vectors as a ``.npy`` written chunk by chunk (plain writes: none of it stays resident in this
    process), returned memory-mapped."""
    bar = Bar(f"{label}: vectors", size)
    with open(path, "wb") as handle:
        header = {"descr": "<f4", "fortran_order": False, "shape": (size, base_vectors.shape[1])}
        np.lib.format.write_array_header_1_0(handle, header)
        for start in range(0, size, CHUNK):
            stop = min(size, start + CHUNK)
            handle.write(synthetic_vectors(base_vectors, start, stop, seed).astype(np.float32).tobytes())
            bar(stop - start)
    return np.load(path, mmap_mode="r")


def run_child(args: argparse.Namespace) -> dict[str, Any]:
    from ragdial.retrieval.analyzer import Analyzer

    work = Path(args.work) / str(args.size)
    work.mkdir(parents=True, exist_ok=True)
    base = base_items(args.data)
    queries = json.loads((Path(args.work) / "queries.json").read_text())
    base_vectors = np.load(Path(args.work) / "base_vectors.npy", mmap_mode="r")
    label = f"{args.system} {args.size:,}"
    row: dict[str, Any] = {"system": args.system, "items": args.size}
    build: dict[str, float] = {}
    analyzer = Analyzer()

    if args.system == "bm25s":
        import bm25s

        start = time.perf_counter()
        tokens, _items = _tokens(synthetic_items(base, args.size, args.seed), args.size, analyzer, label)
        build["items + tokenise"] = time.perf_counter() - start
        start = time.perf_counter()
        model = bm25s.BM25(method="lucene")
        model.index(tokens, show_progress=False)
        build["bm25s index"] = time.perf_counter() - start
        del _items

        def query(text: str):
            ids = model.get_tokens_ids(analyzer(text))
            return model.retrieve([ids], k=20, show_progress=False, n_threads=1) if ids else None

        row.update(latencies(query, queries, args.budget))

    elif args.system == "hybrid-build":
        from ragdial.retrieval.config import RetrieverConfig
        from ragdial.retrieval.index import write_index

        start = time.perf_counter()
        vectors = _vectors(work / "vectors.npy", base_vectors, args.size, args.seed, label)
        build["vectors (synthetic)"] = time.perf_counter() - start
        bars = {
            "items": Bar(f"{label}: items + tokens", args.size),
            "bm25": Bar(f"{label}: bm25 merge", args.size),
            "ann index": Bar(f"{label}: ann", args.size),
        }
        start = time.perf_counter()
        items = synthetic_items(base, args.size, args.seed)  # a generator: streamed to disk, never held
        write_index(items, work / "index", RetrieverConfig(fusion="rrf"), vectors, lambda step, n: bars[step](n))
        build["write_index (items, BM25, vectors, ann)"] = time.perf_counter() - start

    elif args.system == "hybrid":
        from ragdial.retrieval.index import load_index

        start = time.perf_counter()
        retriever = load_index(work / "index", mmap=True)
        build["load index (mmap)"] = time.perf_counter() - start
        row.update(latencies(lambda text: _ranked(retriever.retrieve(_turn(text), None, 20)), queries, args.budget))
        # the same queries again: their vectors are now in the query cache, so this is retrieval without the USE
        # query encoding (a fixed cost per new text, whatever the knowledge base's size)
        again = latencies(lambda text: _ranked(retriever.retrieve(_turn(text), None, 20)), queries, args.budget)
        row.update({f"cached_{key}": value for key, value in again.items()})
        row["pruned"] = bool(retriever.config.shortlist) and args.size > retriever.config.prune_above
        # serving's own peak: the agreement check below scores every item (all the vectors through the mapping)
        row["peak_mb_serving"] = peak_mb()["peak_mb"]
        row.update(resident_mb())
        if row["pruned"]:
            row.update(agreement(retriever, queries[: args.agreement]))

    elif args.system == "milvus":
        from ragdial.retrieval.config import RetrieverConfig
        from ragdial.retrieval.milvus import MilvusRetriever

        start = time.perf_counter()
        milvus_items = list(synthetic_items(base, args.size, args.seed))
        build["items"] = time.perf_counter() - start
        vectors_path = work / "vectors.npy"
        start = time.perf_counter()
        if vectors_path.exists():
            vectors = np.load(vectors_path, mmap_mode="r")
        else:
            vectors = _vectors(vectors_path, base_vectors, args.size, args.seed, label)
        build["vectors (synthetic)"] = time.perf_counter() - start
        start = time.perf_counter()
        uri = args.milvus_uri or str(work / "milvus.db")
        collection = f"ragdial_scaling_{args.size}"
        milvus = MilvusRetriever(uri, collection, config=RetrieverConfig(fusion="rrf"), language="en")
        bar = Bar(f"{label}: insert", len(milvus_items))
        milvus.build(KnowledgeBase(milvus_items), batch_size=1000, vectors=vectors, progress=bar)
        build["insert"] = time.perf_counter() - start
        start = time.perf_counter()
        client = milvus.client
        if hasattr(client, "flush"):
            client.flush(milvus.collection)
        while True:  # until both indexes cover every row
            pending = sum(
                int(client.describe_index(milvus.collection, name).get("pending_index_rows", 0))
                for name in ("sparse", "dense")
            )
            if not pending:
                break
            time.sleep(1)
        client.load_collection(milvus.collection)
        build["flush + index + load"] = time.perf_counter() - start
        del milvus_items
        row.update(latencies(lambda text: _ranked(milvus.retrieve(_turn(text), None, 20)), queries, args.budget))
        row.update(peak_mb(descendants()))
        if args.milvus_uri:
            milvus.client.drop_collection(collection)
        milvus.close()
    else:
        raise SystemExit(f"unknown system {args.system!r}")

    row["build_s"] = {k: round(v, 1) for k, v in build.items()}
    row["build_total_s"] = round(sum(build.values()), 1)
    if "peak_mb" not in row:
        row.update(peak_mb())
    return row


# ---- the parent: base vectors, queries, then every system at every size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--sizes", default="12039,100000,1000000")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ragdial-retrieval-scaling"))
    parser.add_argument("--child-timeout", type=float, default=3600.0, help="seconds one system may take at one size")
    parser.add_argument("--keep", action="store_true", help="keep the built indexes in --work")
    parser.add_argument("--budget", type=float, default=None, help="seconds of queries per system and size (>= 10)")
    parser.add_argument("--agreement", type=int, default=30, help="queries also ranked exactly, to compare")
    parser.add_argument("--out", type=Path, default=DOCS / "retrieval_scaling.json")
    parser.add_argument("--milvus-uri", default="", help="a Milvus server (http://host:19530) instead of milvus-lite")
    parser.add_argument("--child", dest="system", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.system:
        print(json.dumps(run_child(args)), flush=True)
        return

    args.work.mkdir(parents=True, exist_ok=True)
    base = base_items(args.data)
    rng = random.Random(args.seed)
    queries = [str(item.fields["title"]) for item in rng.sample(base, args.queries)]
    (args.work / "queries.json").write_text(json.dumps(queries, ensure_ascii=False))
    from ragdial.text.encoders import encode_cached, get_encoder

    encoder = get_encoder("use")
    start = time.perf_counter()
    sample = [item.text for item in base[:500]]
    encoder.encode(sample)
    encode_rate = len(sample) / (time.perf_counter() - start)
    vectors = np.asarray(encode_cached(encoder, [item.text for item in base]), dtype=np.float32)
    np.save(args.work / "base_vectors.npy", vectors)
    report: dict[str, Any] = {
        "base": {"file": "dstc9_track1/knowledge_eval.json", "items": len(base)},
        "queries": len(queries),
        "seed": args.seed,
        "sigma": SIGMA,
        "use_encode_items_per_s": round(encode_rate, 1),
        "cores": os.cpu_count(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "rows": [],
    }
    print(f"USE encodes {encode_rate:.0f} items/s here; base vectors {vectors.shape}", file=sys.stderr, flush=True)
    systems = args.systems.split(",")
    steps = [s for s in ("bm25s", "hybrid-build", "hybrid", "milvus") if s in systems or s.split("-")[0] in systems]
    for size in (int(s) for s in args.sizes.split(",")):
        for system in steps:
            before = load_average()
            print(f"== {system} at {size:,} items (load average {before})", file=sys.stderr, flush=True)
            command = [sys.executable, __file__, "--child", system, "--size", str(size), "--work", str(args.work)]
            command += ["--data", str(args.data), "--seed", str(args.seed)]
            command += ["--agreement", str(args.agreement)]
            if args.milvus_uri:
                command += ["--milvus-uri", args.milvus_uri]
            if args.budget is not None:
                command += ["--budget", str(args.budget)]
            start = time.perf_counter()
            try:
                done = subprocess.run(
                    command, stdout=subprocess.PIPE, text=True, timeout=args.child_timeout, check=False
                )
                lines = done.stdout.strip().splitlines()
                row = json.loads(lines[-1]) if done.returncode == 0 and lines else None
                if row is None:
                    row = {"system": system, "items": size, "error": f"exit {done.returncode}"}
            except subprocess.TimeoutExpired:
                row = {"system": system, "items": size, "error": f"did not finish in {args.child_timeout:.0f} s"}
            row["wall_s"] = round(time.perf_counter() - start, 1)
            row["load_before"], row["load_after"] = before, load_average()
            if size > len(base) and system in ("hybrid-build", "milvus"):
                row["encode_estimate_s"] = round(size / encode_rate, 0)  # what real USE vectors would have cost
            report["rows"].append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            args.out.write_text(json.dumps(report, indent=2) + "\n")
        if not args.keep:
            shutil.rmtree(args.work / str(size), ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
