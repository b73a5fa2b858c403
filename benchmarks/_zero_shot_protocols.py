"""The zero-shot protocols' splits: leave-one-domain-out DSTC11, KdConv cross-domain, our DSTC9 written test.

No split here touches a public test set. DSTC11 uses val only, grouped as ``shared/data/README.md`` says (dialogs
grouped by the text of their first turn); a group's domain is the domain of its gold knowledge, and groups whose
gold spans both domains (or none) belong to neither side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ragdial import datasets
from ragdial.schema import Dataset, Example, Knowledge, KnowledgeBase

WRITTEN = Path(__file__).resolve().parent / "data" / "dstc9_written"
DSTC11_DOMAINS = ("hotel", "restaurant")


def group_domains(examples: Sequence[Example]) -> dict[str, set[str]]:
    """The domains of each first-turn group's gold knowledge (the domain is the id's first field)."""
    domains: dict[str, set[str]] = defaultdict(set)
    for example in examples:
        key = example.context[0].text if example.context else ""
        domains.setdefault(key, set()).update(k.split(":", 1)[0] for k in example.knowledge_ids)
    return domains


def domain_split(examples: Sequence[Example], domain: str) -> tuple[list[Example], list[Example]]:
    """(examples of groups whose gold is only ``domain``, examples of groups whose gold is only other domains)."""
    domains = group_domains(examples)
    inside, outside = [], []
    for example in examples:
        found = domains[example.context[0].text if example.context else ""]
        if found == {domain}:
            inside.append(example)
        elif found and domain not in found:
            outside.append(example)
    return inside, outside


def domain_kb(kb: KnowledgeBase, domain: str) -> KnowledgeBase:
    """The items of one domain (what a model trained on that domain may see)."""
    return KnowledgeBase(item for item in kb if item.fields.get("domain") == domain)


def load_dstc11(data: Path) -> Dataset:
    return datasets.load("dstc11", data / "dstc11_track5", "val")


def load_written(data: Path, split: str = "test") -> Dataset:
    """Our written DSTC9-format test over the DSTC9 KB's train and taxi domains (``split`` test or dev)."""
    return datasets.load("dstc9", WRITTEN, split, knowledge=data / "dstc9_track1" / "knowledge.json")


KDCONV_DOMAINS = ("film", "music", "travel")


def load_kdconv_cross(data: Path, target: str) -> tuple[list[Example], KnowledgeBase, Dataset]:
    """KdConv cross-domain: (training examples of the two other domains' ``dev.json``, their merged KB, the target
    domain's dataset). Training dialog ids are prefixed with their domain, so dialogs of two files stay apart."""
    train: list[Example] = []
    items: list[Knowledge] = []
    for domain in KDCONV_DOMAINS:
        if domain == target:
            continue
        dataset = datasets.load("kdconv", data / "kdconv" / domain)
        for example in dataset.examples:
            example.dialog_id = f"{domain}:{example.dialog_id}"
            example.id = f"{domain}:{example.id}"
        train.extend(dataset.examples)
        items.extend(dataset.kb)
    return train, KnowledgeBase(items), datasets.load("kdconv", data / "kdconv" / target)
