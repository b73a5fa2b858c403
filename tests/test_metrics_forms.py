"""Metric details the score tests do not pin, worked out by hand on small inputs: the JSON forms a score and a
challenge's scores take, the turn count KdConv/Huawei scoring reports, the mean of no query, the repetition rule's
sentence boundaries, and METEOR 1.5's score name. Written from the survivors
of the session-6 metrics mutation sample (docs/testing.md)."""

from __future__ import annotations

import re
import shutil
import sys

import pytest

from ragdial.errors import RagdialError
from ragdial.metrics import meteor, retrieval
from ragdial.metrics.bertscore import bertscore
from ragdial.metrics.challenges import kdsd
from ragdial.metrics.grounding import cut_degenerate, degenerate_reason
from ragdial.metrics.result import ChallengeScores, Score


def test_a_score_and_a_challenges_scores_as_json():
    assert Score("bleu", 0.25, "bleu|n:4").to_dict() == {"name": "bleu", "value": 0.25, "signature": "bleu|n:4"}
    scores = ChallengeScores("dstc9", {"detection": {"f1": 1, "recall": 0.5}, "mrr": 2}, {"detection": "s"}, {"n": 3})
    assert scores.to_dict() == {
        "challenge": "dstc9",
        "scores": {"detection": {"f1": 1, "recall": 0.5}, "mrr": 2},
        "signatures": {"detection": "s"},
        "counts": {"n": 3},
    }
    assert scores.flat() == {"detection.f1": 1.0, "detection.recall": 0.5, "mrr": 2.0}
    with pytest.raises(TypeError, match=r"detection\.f1"):
        ChallengeScores("x", {"detection": {"f1": None}}).flat()


def test_kdsd_counts_the_turns_it_scored():
    generated, references = ["好的", "天气很好", "是的"], ["好的", "天气好", "是"]
    result = kdsd.score_kdsd([["a"], ["b"], []], [["a"], [], ["c"]], generated, references)
    assert result.counts == {"turns": 3}


def test_no_query_with_gold_ids_scores_zero():
    assert retrieval.recall_at_k([[], []], [["a"], ["b"]], 1).value == 0.0  # both skipped
    assert retrieval.mrr_at_k([[]], [["a"]], 5).value == 0.0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("谢谢您。谢谢您。谢谢您。", "repetition"),  # three sentences of four characters, all the same
        ("谢谢您。谢谢您。", None),  # two sentences are not "mostly repeated text"
        ("谢谢。谢谢。谢谢。", None),  # sentences of three characters are not counted
        ("谢谢您。谢谢您。好的。", None),
    ],
)
def test_the_repeated_sentence_rule_at_its_boundaries(text, reason):
    assert degenerate_reason(text) == reason


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_meteor15_is_named_meteor():
    assert meteor.meteor15(["free parking"], ["free parking"]).name == "meteor"


def test_bertscore_without_its_packages_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "bert_score", None)  # "import bert_score" raises ImportError
    message = "BERTScore needs torch and bert-score (pip install 'ragdial[torch]')"
    with pytest.raises(RagdialError, match=f"^{re.escape(message)}$"):
        bertscore(["a reply"], ["a reference"], model="roberta-large", layers=17)


def test_the_meteor_jar_needs_its_paraphrase_table_beside_it(tmp_path, monkeypatch):
    import importlib.machinery
    import importlib.util

    package = tmp_path / "pycocoevalcap"
    (package / "meteor" / "data").mkdir(parents=True)
    jar = package / "meteor" / "meteor-1.5.jar"
    jar.write_bytes(b"")
    spec = importlib.machinery.ModuleSpec("pycocoevalcap", None, is_package=True)
    spec.submodule_search_locations = [str(package)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec if name == "pycocoevalcap" else None)
    with pytest.raises(RagdialError, match="paraphrase table not found"):
        meteor.meteor_jar()
    (package / "meteor" / "data" / "paraphrase-en.gz").write_bytes(b"")
    assert meteor.meteor_jar() == jar


def test_wordnet_is_found_as_a_zip_too(monkeypatch):
    import nltk

    found = {"corpora/wordnet.zip"}

    def find(name):
        if name not in found:
            raise LookupError(name)
        return name

    monkeypatch.setattr(nltk.data, "find", find)
    assert meteor._nltk_has_wordnet() is True
    found.clear()
    assert meteor._nltk_has_wordnet() is False


def test_a_phrase_repeated_line_by_line_is_cut():
    text = "Opening hours are 9 to 5.\nok\nok\nok\nok\n"  # "ok" + line break, four times
    assert cut_degenerate(text) == "Opening hours are 9 to 5."
    assert degenerate_reason(text) == "repetition"
