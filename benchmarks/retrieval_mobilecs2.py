"""FutureDial-RAG (MobileCS2) track 1 on the project's MobileCS2-shaped fixtures (zh and en), under the organisers'
rules: recall@1/5/20 per gold piece over the turns their code scores, end to end through the official track-1
writer and reader (``top20_id`` indexes into ``ret_qa`` + the dialog's local_kb), with recall@k per kind of gold
(local_kb, product, [QA] synthetic entry).

The real MobileCS2 data is under a data-usage agreement and not here; the fixtures
(tests/fixtures/mobilecs2/official/<lang>/dev_final_processed.json, checked against the organisers' own code) are
small invented dialogs in its exact format, so these figures check the pipeline, not the challenge. Run:
``PYTHONPATH=src python benchmarks/retrieval_mobilecs2.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import DOCS, markdown_table
from ragdial import datasets
from ragdial.datasets import mobilecs2
from ragdial.metrics.challenges.futuredial import score_track1
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mobilecs2" / "official"
KINDS = {"user_profile": "local", "product": "product", "faq": "[QA]"}
SYSTEMS = {
    "BM25": RetrieverConfig(encoder=None, fusion="bm25"),
    "dense (USE)": RetrieverConfig(fusion="dense"),
    "hybrid (RRF)": RetrieverConfig(fusion="rrf"),
}


def main() -> None:
    rows: list[dict[str, object]] = []
    for language in ("zh", "en"):
        dataset = datasets.load("mobilecs2", FIXTURES / language / "dev_final_processed.json")
        examples = [e for e in dataset.examples if e.knowledge_ids]
        for name, config in SYSTEMS.items():
            retriever = HybridRetriever(dataset.kb, config)
            rankings = {
                e.id: [r.item.id for r in retriever.retrieve(e.context, e.dialog_id, 20).ranked] for e in examples
            }
            with tempfile.TemporaryDirectory() as tmp:
                path = mobilecs2.write_track1(Path(tmp) / "track1.json", dataset.kb, examples, rankings)
                submitted = mobilecs2.read_track1(path, dataset)
            scores = score_track1([e.knowledge_ids for e in examples], [submitted[e.id] for e in examples])
            row: dict[str, object] = {"language": language, "system": name, "turns": len(examples), **scores.flat()}
            for source, kind in KINDS.items():
                part = [e for e in examples if e.meta.get("scored_source") == source]
                if part:
                    recall = score_track1([e.knowledge_ids for e in part], [submitted[e.id] for e in part]).scores
                    row[f"{kind} R@5"] = recall["R@5"]
            rows.append(row)
            print(rows[-1], flush=True)
    print(markdown_table(rows))
    (DOCS / "retrieval_mobilecs2.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
