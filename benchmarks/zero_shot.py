"""Zero-shot detection and selection: knowledge and domains never trained on (issue 20).

Protocols (no public test split is read):

- ``lodo``: DSTC11 val, leave one domain out. Dialogs are grouped by their first turn (the folds rule of
  ``shared/data/README.md``); a group belongs to a domain when all its gold knowledge does. Models are trained on
  one domain's groups with that domain's knowledge only, and evaluated on the other domain's groups with the full
  knowledge base (hotel -> restaurant and restaurant -> hotel).
- ``kdconv``: KdConv cross-domain, train on two domains' ``dev.json``, evaluate the third (each in turn): every
  system turn scored with the challenge score (triple P/R/F1 + character BLEU-1/2 and F1 of template replies
  generated from the predicted triples), with the zero-shot detector deciding which turns get triples. Selection by
  the hybrid fusion, the transfer reranker and the triple reranker (``retrieval.triples``: the transfer columns plus
  an attribute matcher learnt across the two training domains). More rows say where the score is lost: each
  reranker with gold detection, gold triples on the detected turns, and gold triples on the gold turns (the
  template's ceiling); the shipped row (triple reranker + speak rule) is split by turn class (knowledge turn stated
  right / wrong / silent, no-knowledge turn silent / stated) with each class's share of the triple half; with
  ``--triple-encoder e5`` that row again with a triple reranker also reading the sentence encoder.
- ``fold0``: DSTC11 val in domain: folds 1-4 train, fold 0 evaluates (the existing anchor).
- ``written``: train on all of DSTC11 val (hotel + restaurant), evaluate on our locked written test over the DSTC9
  knowledge base's train and taxi domains (``benchmarks/data/dstc9_written``, split ``test``; ``--split dev`` for
  the development part).

Detection is scored per instance (P/R/F1, the DSTC formula). Selection is scored on the knowledge-seeking turns
with gold detection, twice: as a ranking (MRR@5, R@1, R@5 over the full ranked list, R@k = "any gold in the top
k", the DSTC9 definition) and as a cut (micro P/R/F1 over items and exact match, the DSTC11 formula).

Usage: ``PYTHONPATH=src python benchmarks/zero_shot.py lodo|fold0|written [--data DIR] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _model_cache import M, cached, fingerprint
from _zero_shot_protocols import (
    DSTC11_DOMAINS,
    KDCONV_DOMAINS,
    domain_kb,
    domain_split,
    load_dstc11,
    load_kdconv_cross,
    load_written,
)
from ragdial.datasets.folds import split_folds
from ragdial.evaluation import best_cut, detection_prf, selection_scores
from ragdial.metrics.retrieval import mrr_at_k, recall_at_k
from ragdial.paths import data_root
from ragdial.retrieval import precedent, rerank, transfer, triples, tuned
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, KnowledgeBase
from ragdial.understanding import knowledge_cues, tasks, turn_detector
from ragdial.understanding.kb_calibration import fit_reference, kb_threshold
from ragdial.understanding.model import TextClassifier
from ragdial.understanding.tasks import zero_shot_detector

DEPTH = 20


def ranking_scores(golds: Sequence[Sequence[str]], rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    return {
        "MRR@5": mrr_at_k(golds, rankings, 5).value,
        "R@1": recall_at_k(golds, rankings, 1).value,
        "R@5": recall_at_k(golds, rankings, 5).value,
    }


def detection_rows(train: list[Example], train_kb: KnowledgeBase, test: list[Example], test_kb: KnowledgeBase):
    """The in-domain default detector (n-grams + USE + KB match) and the zero-shot one, trained and scored."""
    x, y = [e.context for e in train], [bool(e.needs_knowledge) for e in train]
    xt, yt = [e.context for e in test], [bool(e.needs_knowledge) for e in test]
    rows, predicted = [], {}
    zero_shot = None
    for name in (
        "default detector (n-grams + USE + KB match)",
        "zero-shot detector (KB match + act cues)",
        "zero-shot detector + KB calibration",
    ):
        started = time.perf_counter()
        threshold = 0.5
        if name.startswith("default"):
            model = turn_detector([i.text for i in train_kb], "use").fit(x, y)
            model.set_knowledge([i.text for i in test_kb])
        elif zero_shot is None:
            model = zero_shot = zero_shot_detector(list(train_kb)).fit(x, y)
            model.set_knowledge(list(test_kb))
        else:  # the same model, its threshold moved to the test KB by the KB's own questions (no test label read)
            model = zero_shot
            fit_reference(model, list(train_kb))
            threshold = kb_threshold(model, list(test_kb), 0.5) or 0.5
        flags = [bool(p >= threshold) for p in model.probabilities(xt)[:, -1]]
        predicted = {e.id: bool(flag) for e, flag in zip(test, flags, strict=True)}
        p, r, f = detection_prf(yt, flags)
        rows.append(
            {
                "detector": name,
                "threshold": round(threshold, 3),
                "P": p,
                "R": r,
                "F1": f,
                "seconds": round(time.perf_counter() - started),
            }
        )
        print(rows[-1], flush=True)
    return rows, predicted


def selection_rows(
    train: list[Example],
    train_kb: KnowledgeBase,
    test: list[Example],
    test_kb: KnowledgeBase,
    aux_encoder: str | None = None,
    transfer_depth: int = 50,
    use_precedent: bool = False,
    use_tuned: bool = False,
    tuned_dir: Path | None = None,
    baselines: bool = True,
    prototype: bool = False,
):
    """Hybrid RRF (top-k cut tuned on train), the in-domain LightGBM reranker, the transfer reranker without and
    with its fallback (and, with ``aux_encoder``, again reading that second encoder, ``transfer_depth`` deep; with
    ``use_precedent``, the in-domain reranker again wrapped with the training turns as precedents, copied and then
    voted by a stacker; with ``use_tuned``, the last transfer reranker again with fine-tuned MiniLM
    encoders (bi-encoders) rescoring its 20 best, loaded from ``tuned_dir`` when a wrapper was saved there, else
    trained and saved there; without ``baselines``, neither the in-domain reranker nor the transfer reranker without
    the second encoder; with ``prototype``, each transfer reranker again with the aspect-prototype columns, and the
    tuned wrapper over that one): ranking and cut scores on ``test`` (gold detection)."""
    train = [e for e in train if e.needs_knowledge and e.knowledge_ids]
    test = [e for e in test if e.needs_knowledge and e.knowledge_ids]
    config = RetrieverConfig(fusion="rrf")
    train_retriever = HybridRetriever(train_kb, config)
    test_retriever = HybridRetriever(test_kb, config)
    golds = [e.knowledge_ids for e in test]
    rows, ranked = [], {}

    def score(name: str, cut: str, rankings, preds) -> None:
        rows.append({"system": name, **ranking_scores(golds, rankings), "cut": cut, **selection_scores(golds, preds)})
        ranked[name] = {e.id: r for e, r in zip(test, rankings, strict=True)}
        print(rows[-1], flush=True)

    def rank(retriever, examples, depth=DEPTH):
        return [[r.item.id for r in retriever.retrieve(e.context, e.dialog_id, depth).ranked] for e in examples]

    def score_with(reranker, name: str, cut: str) -> None:
        """Score ``test`` with ``reranker`` in the test retriever: its ranking (``DEPTH`` deep) and its selected
        set (the cut of at most 10), both from one retrieval per turn."""
        test_retriever.reranker = reranker
        found = [test_retriever.retrieve(e.context, e.dialog_id, DEPTH, select=10) for e in test]
        score(
            name, cut, [[r.item.id for r in f.ranked] for f in found], [[r.item.id for r in f.selected] for f in found]
        )

    k = best_cut([e.knowledge_ids for e in train], rank(train_retriever, train))
    rankings = rank(test_retriever, test)
    score("hybrid RRF", f"top-{k}", rankings, [r[:k] for r in rankings])
    started = time.perf_counter()
    indomain = rerank.train(train_retriever, train, relative_cut=True) if baselines or use_precedent else None
    if indomain is not None:
        print(f"in-domain reranker trained in {time.perf_counter() - started:.0f}s", flush=True)
        score_with(
            indomain,
            "LightGBM reranker (in-domain features)",
            f"p>={indomain.threshold:.2f}, >={indomain.relative:.1f}xbest",
        )
    if use_precedent and indomain is not None:
        wrapped = precedent.train(train_retriever, train, indomain)
        print(f"precedents: {wrapped.info}, threshold {wrapped.threshold:.3f}", flush=True)
        cut = (
            f"precedent cos>={wrapped.threshold:.2f}, else p>={indomain.threshold:.2f}, >={indomain.relative:.1f}xbest"
        )
        score_with(wrapped, "LightGBM reranker (in-domain features) + precedents", cut)
        started = time.perf_counter()
        voted = precedent.train(
            train_retriever, train, indomain, refit=lambda part: rerank.train(train_retriever, part, relative_cut=True)
        )
        stacker = voted.stacker
        assert stacker is not None
        print(f"precedent vote trained in {time.perf_counter() - started:.0f}s: {voted.info}", flush=True)
        cut = f"stacker p>={stacker.threshold:.2f}, >={stacker.relative:.1f}xbest"
        score_with(voted, "LightGBM reranker (in-domain features) + precedents voted (stacker)", cut)
    systems: list[tuple[str | None, int]] = [(None, 50)] if baselines or not aux_encoder else []
    systems += [(aux_encoder, transfer_depth)] if aux_encoder else []
    for aux, depth, proto in [(a, d, p) for a, d in systems for p in ((False, True) if prototype else (False,))]:
        started = time.perf_counter()
        transferred = transfer.train(train_retriever, train, depth=depth, aux_encoder=aux, prototype=proto)
        label = f"transfer reranker + {aux} features (depth {depth})" if aux else "transfer reranker"
        label += " + aspect prototype" if proto else ""
        print(f"{label} trained in {time.perf_counter() - started:.0f}s, fallback {transferred.fallback}", flush=True)
        for name, fallback in ((f"{label}, no fallback", 0.0), (f"{label} + fallback", transferred.fallback)):
            cut = f"p>={transferred.threshold:.2f}, >={transferred.relative:.1f}xbest, fallback<{fallback:.2f}"
            score_with(replace(transferred, fallback=fallback), name, cut)
    if use_tuned:
        started = time.perf_counter()
        aux, depth = (aux_encoder, transfer_depth) if aux_encoder else (None, 50)
        tuned_model = tuned_wrapper(
            tuned_dir,
            lambda: tuned.train(
                train_retriever,
                train,
                transferred,
                refit=lambda part: transfer.train(
                    train_retriever, part, depth=depth, aux_encoder=aux, prototype=prototype
                ),
            ),
        )
        print(f"tuned encoders ready in {time.perf_counter() - started:.0f}s: {tuned_model.info}", flush=True)
        cut = f"w={tuned_model.weight:g}, p>={tuned_model.threshold:.2f}, >={tuned_model.relative:.1f}xbest"
        score_with(tuned_model, f"{label} + fine-tuned MiniLM (top {tuned_model.top})", cut)
    return rows, ranked


def tuned_wrapper(folder: Path | None, train: Callable[[], tuned.TunedReranker]) -> tuned.TunedReranker:
    """The tuned wrapper saved in ``folder`` (a run's ``--tuned-dir`` part), else ``train()``'s, saved there when
    ``folder`` is given: a second run of the same protocol reuses the fine-tuned encoders (~1 h CPU a direction)."""
    if folder is not None and (folder / tuned.META_FILE).is_file():
        print(f"tuned wrapper loaded from {folder} (not retrained)", flush=True)
        return tuned.TunedReranker.load(folder)
    model = train()
    if folder is not None:
        model.save(folder)
    return model


def run_folder(root: Path | None, run: str) -> Path | None:
    """``root``'s sub-folder for one run of a protocol (``hotel -> restaurant`` -> ``hotel-restaurant``)."""
    if root is None:
        return None
    return root / "-".join("".join(c if c.isalnum() else " " for c in run).split()).lower()


def end_to_end_dstc9(test: list[Example], kb: KnowledgeBase, detected: dict[str, bool], ranked: dict[str, dict]):
    """The official DSTC9 selection scores of detection + ranking together (``ragdial.metrics`` ``score_dstc9``:
    MRR@5/R@1/R@5 summed over true positives and weighted by detection, as ``scores.py`` does)."""
    from ragdial.datasets.dstc import LabelRecord, label_record
    from ragdial.metrics.challenges.dstc import score_dstc9

    gold = [
        cast(LabelRecord, label_record(kb, bool(e.needs_knowledge), e.knowledge_ids, e.response or "")) for e in test
    ]
    rows = []
    for system, rankings in ranked.items():
        predictions: list[LabelRecord] = []
        for example in test:
            ids = rankings.get(example.id, [])[:5]
            response = str(kb.get(ids[0]).fields.get("body", "") or "-") if ids else "-"
            predictions.append(cast(LabelRecord, label_record(kb, detected[example.id], ids, response)))
        result = score_dstc9(gold, predictions).scores
        detection, selection = (
            cast("dict[str, float]", result["detection"]),
            cast("dict[str, float]", result["selection"]),
        )
        rows.append({"selection": system, **detection, **selection})
        print(rows[-1], flush=True)
    return rows


TURN_CLASSES = (
    "knowledge turn, a gold triple stated",
    "knowledge turn, only wrong triples stated",
    "knowledge turn, silent",
    "no-knowledge turn, silent",
    "no-knowledge turn, triples stated",
)


def turn_class(gold: Sequence[str], selected: Sequence[str]) -> str:
    """Which of :data:`TURN_CLASSES` a scored turn falls in."""
    if gold:
        if not selected:
            return TURN_CLASSES[2]
        return TURN_CLASSES[0] if set(gold) & set(selected) else TURN_CLASSES[1]
    return TURN_CLASSES[4] if selected else TURN_CLASSES[3]


def turn_classes(
    golds: Sequence[Sequence[str]],
    selections: Sequence[Sequence[str]],
    responses: Sequence[str],
    replies: Sequence[str],
) -> list[dict]:
    """Where a KdSD score is made and lost, by turn class: each class's share of the turns, the points it adds to
    the triple half (0.3 x its share x its mean per-turn P + R + F1) and what it leaves of that half (a class
    would add 0.9 x its share if every turn in it were right), and its replies' mean character F1."""
    from ragdial.metrics.challenges.kdsd import TOKENS
    from ragdial.metrics.overlap import generation_f1
    from ragdial.metrics.retrieval import set_prf

    classes = [turn_class(g, s) for g, s in zip(golds, selections, strict=True)]
    rows = []
    for name in TURN_CLASSES:
        members = [i for i, c in enumerate(classes) if c == name]
        if not members:
            continue
        share = len(members) / len(classes)
        prf = set_prf([golds[i] for i in members], [selections[i] for i in members], average="query")
        points = 0.3 * share * sum(prf[key].value for key in ("precision", "recall", "f1"))
        gen_f1 = generation_f1([replies[i] for i in members], [responses[i] for i in members], TOKENS).value
        rows.append(
            {
                "class": name,
                "turns": len(members),
                "share": share,
                "triple half": points,
                "triple half left": 0.9 * share - points,
                "reply char F1": gen_f1,
            }
        )
        print(rows[-1], flush=True)
    return rows


WRONG_KINDS = ("other entity, gold entity new", "other entity, gold entity seen", "gold entity, other attribute")


def wrong_triple_kinds(examples: Sequence[Example], selections: Sequence[Sequence[str]], kb: KnowledgeBase) -> dict:
    """Why a knowledge turn's stated triples are all wrong, by its first stated triple: another entity than every
    gold one while the gold entity is new (no earlier gold triple of the dialog has it: the talk moved on) or was
    cited before, or a gold entity with another attribute. Counts of :data:`WRONG_KINDS`."""
    counts = dict.fromkeys(WRONG_KINDS, 0)
    seen: dict[str, set[str]] = {}

    def entity(item_id: str) -> str:
        item = kb.get(item_id)
        return str(item.fields.get("entity", "")) if item is not None else ""

    for example, selected in zip(examples, selections, strict=True):
        gold = set(example.knowledge_ids)
        before = seen.setdefault(example.dialog_id, set())
        entities = {entity(i) for i in gold}
        if gold and selected and not gold & set(selected):
            if entity(selected[0]) in entities:
                counts[WRONG_KINDS[2]] += 1
            else:
                counts[WRONG_KINDS[1] if entities & before else WRONG_KINDS[0]] += 1
        before |= entities
    return counts


def kdconv_rows(
    data: Path, target: str, speak_weight: float = 2.0, encoder: str | None = None, cache: Path | None = None
) -> list[dict]:
    """Train on the other two KdConv domains, evaluate ``target``: challenge score per selection system (triple
    P/R/F1 averaged over turns as the organisers do; ``pooled score``: the same with pooled counts, sessions 3-6).
    With ``encoder``, the speak-rule row again with a triple reranker reading that sentence encoder. With ``cache``
    (a folder), the detector and rerankers trained by an earlier run on the same data and code are read from it."""
    from ragdial.generation.base import GenerationRequest
    from ragdial.generation.template import TemplateGenerator
    from ragdial.metrics.challenges.kdsd import score_kdsd
    from ragdial.metrics.retrieval import set_prf
    from ragdial.pipeline.branch import open_to_speak, speak
    from ragdial.retrieval.base import Retrieval
    from ragdial.understanding.decision import Decision

    train, train_kb, dataset = load_kdconv_cross(data, target)
    test = dataset.examples
    print(f"== KdConv -> {target}: train {len(train)} system turns, test {len(test)}", flush=True)
    started = time.perf_counter()
    labels = [bool(e.needs_knowledge) for e in train]
    detector, _ = cached(  # a Chinese KB: C 1, no <sys> mask (ZERO_SHOT_DEFAULTS)
        cache,
        f"{target}-detector",
        fingerprint(train, [target, "zero-shot detector", labels], [tasks, knowledge_cues]),
        lambda: zero_shot_detector(list(train_kb)).fit([e.context for e in train], labels),
        TextClassifier.load,
    )
    detector.set_knowledge(list(dataset.kb))
    detected = [bool(d) for d in detector.predict([e.context for e in test])]
    need_p = [float(p) for p in detector.probabilities([e.context for e in test]).ravel()]
    p, r, f = detection_prf([bool(e.needs_knowledge) for e in test], detected)
    print(f"zero-shot detector P {p:.3f} R {r:.3f} F1 {f:.3f} ({time.perf_counter() - started:.0f}s)", flush=True)
    generator = TemplateGenerator.train(train, train_kb, "zh")
    seeking = [e for e in train if e.needs_knowledge and e.knowledge_ids]
    config = RetrieverConfig(fusion="rrf", carry_turns=100)
    train_retriever = HybridRetriever(train_kb, config)
    retriever = HybridRetriever(dataset.kb, config)
    k = best_cut(
        [e.knowledge_ids for e in seeking],
        [[r.item.id for r in train_retriever.retrieve(e.context, e.dialog_id, DEPTH).ranked] for e in seeking],
    )

    def by_domain(example: Example) -> str:
        return example.id.split(":", 1)[0]

    def trained(name: str, train_model: Callable[[], M], load: Callable[[Path], M], *options: object) -> M:
        started = time.perf_counter()
        key = fingerprint(seeking, [target, *options], [transfer, triples])
        model, reused = cached(cache, f"{target}-{name}", key, train_model, load)
        how = "read from the model cache" if reused else "trained"
        print(f"{name} reranker {how} in {time.perf_counter() - started:.0f}s", flush=True)
        return model

    model = trained("transfer", lambda: transfer.train(train_retriever, seeking), transfer.TransferReranker.load)
    triple_model = trained(
        "triple",
        lambda: triples.train(train_retriever, seeking, group_of=by_domain),
        triples.TripleReranker.load,
    )
    rows = []

    def add_row(name: str, selections: list[list[str]], detection_f1: float) -> list[str]:
        replies = [
            generator.generate(
                GenerationRequest(list(e.context), [dataset.kb.get(i) for i in ids], "zh", max_tokens=96)
            ).strip()
            for e, ids in zip(test, selections, strict=True)
        ]
        golds = [e.knowledge_ids for e in test]
        scores = score_kdsd(golds, selections, [e.response or "" for e in test], replies)
        result = scores.scores
        generation = cast("dict[str, float]", result["generation"])
        knowledge = cast("dict[str, float]", result["knowledge"])
        pooled = set_prf(golds, selections)
        rows.append(
            {
                "target": target,
                "selection": name,
                "detection F1": detection_f1,
                **{f"triple {key}": value for key, value in knowledge.items()},
                "BLEU-1": generation["bleu-1"],
                "BLEU-2": generation["bleu-2"],
                "gen F1": generation["f1"],
                "score": result["score"],
                "pooled score": 0.3 * sum(pooled[key].value for key in ("precision", "recall", "f1"))
                + 0.7 * (generation["bleu-1"] + generation["bleu-2"] + generation["f1"]),
            }
        )
        print(rows[-1], flush=True)
        return replies

    gold_needs = [bool(e.needs_knowledge) for e in test]
    runs = (("hybrid RRF", None), ("transfer reranker", model), ("triple reranker (+ attribute matcher)", triple_model))
    for name, reranker in runs:
        retriever.reranker = reranker
        chosen: dict[int, list[str]] = {}
        for index, (example, needs) in enumerate(zip(test, detected, strict=True)):
            if needs or (reranker is not None and gold_needs[index]):  # gold-detection rows below
                found = retriever.retrieve(example.context, example.dialog_id, DEPTH)
                picked = found.selected if reranker is not None else found.ranked[:k]
                chosen[index] = [c.item.id for c in picked]
        label = name if reranker is None else f"{name} (p>={reranker.threshold:.2f})"
        add_row(label, [chosen[i] if needs else [] for i, needs in enumerate(detected)], f)
        if reranker is not None:  # where the score is lost: the same reranker with gold detection
            add_row(f"{name}, gold detection", [chosen[i] if n else [] for i, n in enumerate(gold_needs)], 1.0)
    # the speak rule of the plain pipeline path (system.speak_weight), with the triple reranker (and, with
    # ``encoder``, again with a triple reranker that also reads that sentence encoder)
    speakers = [("triple reranker", triple_model)]
    if encoder:
        encoded = trained(
            f"triple-{encoder}",
            lambda: triples.train(train_retriever, seeking, group_of=by_domain, encoder=encoder),
            triples.TripleReranker.load,
            encoder,
        )
        speakers.append((f"triple reranker + {encoder} columns", encoded))
    golds, responses = [list(e.knowledge_ids) for e in test], [e.response or "" for e in test]
    for name, reranker in speakers:
        retriever.reranker = reranker
        spoken = []
        for example, p in zip(test, need_p, strict=True):
            decision = open_to_speak(Decision(p >= 0.5, confidence=p), speak_weight)
            needs = decision.needs_knowledge
            sought = retriever.retrieve(example.context, example.dialog_id, DEPTH) if needs else None
            decision, kept = speak(decision, sought or Retrieval(), speak_weight)
            spoken.append([c.item.id for c in kept.selected] if decision.needs_knowledge else [])
        replies = add_row(f"{name} + speak rule (w={speak_weight:g})", spoken, f)
        for row in turn_classes(golds, spoken, responses, replies):  # where that row's score is made and lost
            rows.append({"target": target, "selection": f"turn class of the {name} speak-rule row", **row})
        wrong = wrong_triple_kinds(test, spoken, dataset.kb)
        print(f"wrong triples stated, by kind: {wrong}", flush=True)
        rows.append({"target": target, "selection": f"wrong triples of the {name} speak-rule row", **wrong})
    # gold triples on the detected turns, and the template's ceiling (gold triples on the gold turns)
    gold = [list(e.knowledge_ids) for e in test]
    add_row("gold triples, zero-shot detection", [gold[i] if n else [] for i, n in enumerate(detected)], f)
    add_row("gold triples, gold detection", [gold[i] if n else [] for i, n in enumerate(gold_needs)], 1.0)
    return rows


def kdconv_in_domain_rows(data: Path, target: str, speak_weight: float = 2.0, folds: int = 5) -> list[dict]:
    """The same parts trained on ``target``'s own ``dev.json`` (dialog ``i`` in fold ``i % folds``; each fold
    scored by a detector, triple reranker and template trained on the other folds): what the parts reach without
    the domain shift. Not a cross-domain result, a ceiling for it."""
    from ragdial import datasets
    from ragdial.generation.base import GenerationRequest
    from ragdial.generation.template import TemplateGenerator
    from ragdial.metrics.challenges.kdsd import score_kdsd
    from ragdial.pipeline.branch import open_to_speak, speak
    from ragdial.understanding.decision import Decision

    dataset = datasets.load("kdconv", data / "kdconv" / target)
    test = dataset.examples
    fold = [int(e.dialog_id) % folds for e in test]
    retriever = HybridRetriever(dataset.kb, RetrieverConfig(fusion="rrf", carry_turns=100))
    spoken: list[list[str]] = [[] for _ in test]
    gold_detected: list[list[str]] = [[] for _ in test]
    replies: dict[str, list[str]] = {"speak": [""] * len(test), "gold": [""] * len(test)}
    started = time.perf_counter()
    for k in range(folds):
        train = [e for e, f in zip(test, fold, strict=True) if f != k]
        held = [i for i, f in enumerate(fold) if f == k]
        detector = zero_shot_detector(list(dataset.kb)).fit(
            [e.context for e in train], [bool(e.needs_knowledge) for e in train]
        )
        retriever.reranker = triples.train(retriever, [e for e in train if e.needs_knowledge and e.knowledge_ids])
        generator = TemplateGenerator.train(train, dataset.kb, "zh")
        probabilities = detector.probabilities([test[i].context for i in held]).ravel()
        for i, p in zip(held, probabilities, strict=True):
            example = test[i]
            found = retriever.retrieve(example.context, example.dialog_id, DEPTH)
            if example.needs_knowledge:
                gold_detected[i] = [c.item.id for c in found.selected]
            decision, said = speak(
                open_to_speak(Decision(p >= 0.5, confidence=float(p)), speak_weight), found, speak_weight
            )
            if decision.needs_knowledge:
                spoken[i] = [c.item.id for c in said.selected]
            for name, ids in (("speak", spoken[i]), ("gold", gold_detected[i])):
                request = GenerationRequest(
                    list(example.context), [dataset.kb.get(j) for j in ids], "zh", max_tokens=96
                )
                replies[name][i] = generator.generate(request).strip()
        print(f"in domain {target}: fold {k} done ({time.perf_counter() - started:.0f}s)", flush=True)
    rows = []
    golds, responses = [e.knowledge_ids for e in test], [e.response or "" for e in test]
    names = {
        "speak": f"in domain (5 folds): triple reranker + speak rule (w={speak_weight:g})",
        "gold": "in domain (5 folds): triple reranker, gold detection",
    }
    for key, selections in (("speak", spoken), ("gold", gold_detected)):
        result = score_kdsd(golds, selections, responses, replies[key]).scores
        generation = cast("dict[str, float]", result["generation"])
        knowledge = cast("dict[str, float]", result["knowledge"])
        rows.append(
            {
                "target": target,
                "selection": names[key],
                **{f"triple {k}": v for k, v in knowledge.items()},
                "BLEU-1": generation["bleu-1"],
                "BLEU-2": generation["bleu-2"],
                "gen F1": generation["f1"],
                "score": result["score"],
            }
        )
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("protocol", choices=("lodo", "fold0", "written", "kdconv"))
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--split", default="test", help="written protocol: test (locked) or dev")
    parser.add_argument("--only", choices=("detection", "selection"), help="run one half")
    parser.add_argument("--json", type=Path, help="write the tables here")
    parser.add_argument("--aux-encoder", help="also a transfer reranker reading this second encoder (e.g. minilm)")
    parser.add_argument("--transfer-depth", type=int, default=50, help="that reranker's depth")
    parser.add_argument("--precedent", action="store_true", help="also the in-domain reranker with precedents")
    parser.add_argument("--tuned", action="store_true", help="also the transfer reranker + fine-tuned MiniLM")
    parser.add_argument(
        "--tuned-dir",
        type=Path,
        help="with --tuned: load each run's tuned wrapper from DIR/<run> if saved there, else train and save it",
    )
    parser.add_argument(
        "--skip-baselines",
        action="store_true",
        help="selection: no in-domain reranker and, with --aux-encoder, no transfer reranker without it",
    )
    parser.add_argument(
        "--prototype", action="store_true", help="selection: each transfer reranker also with the aspect prototype"
    )
    parser.add_argument("--source", choices=DSTC11_DOMAINS, help="lodo: only the run trained on this domain")
    parser.add_argument("--speak-weight", type=float, default=2.0, help="kdconv: the speak rule weight")
    parser.add_argument("--targets", default=",".join(KDCONV_DOMAINS), help="kdconv: the held-out domains")
    parser.add_argument(
        "--in-domain", action="store_true", help="kdconv: instead, each target trained on its own dialogs (5 folds)"
    )
    parser.add_argument(
        "--triple-encoder", help="kdconv: also the speak-rule row with a triple reranker reading this encoder (e5)"
    )
    parser.add_argument(
        "--model-cache",
        type=Path,
        help="kdconv: keep the trained detector and rerankers here and reuse them on a run with the same data and code",
    )
    args = parser.parse_args()
    if args.protocol == "kdconv":
        by_target: dict[str, Any] = {}
        for target in args.targets.split(","):
            if args.in_domain:
                by_target[target] = kdconv_in_domain_rows(args.data, target, args.speak_weight)
            else:
                by_target[target] = kdconv_rows(
                    args.data, target, args.speak_weight, args.triple_encoder, args.model_cache
                )
            if args.json:
                args.json.write_text(json.dumps(by_target, indent=2, ensure_ascii=False))
        return
    dstc11 = load_dstc11(args.data)
    runs = []
    if args.protocol == "lodo":
        for source in [args.source] if args.source else DSTC11_DOMAINS:
            target = next(d for d in DSTC11_DOMAINS if d != source)
            train, _ = domain_split(dstc11.examples, source)
            test, _ = domain_split(dstc11.examples, target)
            runs.append((f"{source} -> {target}", train, domain_kb(dstc11.kb, source), test, dstc11.kb))
    elif args.protocol == "fold0":
        train, test = split_folds(dstc11.examples)
        runs.append(("DSTC11 val folds 1-4 -> fold 0", train, dstc11.kb, test, dstc11.kb))
    else:
        written = load_written(args.data, args.split)
        runs.append((f"DSTC11 val -> written {args.split}", dstc11.examples, dstc11.kb, written.examples, written.kb))
    report: dict[str, Any] = {}
    for name, train, train_kb, test, test_kb in runs:
        seeking = sum(bool(e.needs_knowledge) for e in test)
        print(f"== {name}: train {len(train)} instances, test {len(test)} ({seeking} seeking)", flush=True)
        entry: dict[str, Any] = {}
        if args.only != "selection":
            entry["detection"], detected = detection_rows(train, train_kb, test, test_kb)
        if args.only != "detection":
            entry["selection"], ranked = selection_rows(
                train,
                train_kb,
                test,
                test_kb,
                args.aux_encoder,
                args.transfer_depth,
                args.precedent,
                args.tuned,
                run_folder(args.tuned_dir, name),
                not args.skip_baselines,
                args.prototype,
            )
        if args.protocol == "written" and not args.only:
            entry["end_to_end"] = end_to_end_dstc9(test, test_kb, detected, ranked)
        report[name] = entry
        if args.json:  # after every run, so a long job leaves what it finished
            args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
