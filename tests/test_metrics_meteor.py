"""METEOR: nltk with WordNet from the Debian package, and the METEOR 1.5 jar from pycocoevalcap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragdial.metrics import meteor


@pytest.fixture(scope="module")
def wordnet(tmp_path_factory):
    try:
        return meteor.ensure_wordnet()
    except meteor.WordNetMissing as err:
        pytest.skip(str(err))


def test_nltk_meteor_uses_wordnet_synonyms(wordnet):
    # exact matches only: "he is" of 3 words; with WordNet "fast" ~ "quick" all 3 match in one chunk.
    # Fmean = 1, penalty = 0.5 * (1/3)^3 -> 1 - 1/54 (nltk 3.5 on the same input gives the same value)
    score = meteor.nltk_meteor(["he", "is", "fast"], ["he", "is", "quick"])
    assert score.value == pytest.approx(1 - 1 / 54) and score.signature == meteor.nltk_meteor_signature()
    assert meteor.nltk_meteor([], ["he", "is", "quick"]).value == 0.0
    assert "wordnet:3.0" in meteor.nltk_meteor_signature()


def test_missing_wordnet_gives_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(meteor, "_nltk_has_wordnet", lambda: False)
    monkeypatch.setenv("RAGDIAL_WORDNET_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("RAGDIAL_CACHE", str(tmp_path / "cache"))
    meteor.ensure_wordnet.cache_clear()
    try:
        with pytest.raises(meteor.WordNetMissing, match="wordnet-base"):
            meteor.ensure_wordnet()
    finally:
        meteor.ensure_wordnet.cache_clear()


def test_build_wordnet_rejects_an_incomplete_folder(tmp_path):
    (tmp_path / "src").mkdir()
    with pytest.raises(meteor.WordNetMissing, match="missing"):
        meteor.build_wordnet(tmp_path / "src", tmp_path / "nltk")


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_meteor15_corpus_and_segments():
    # expected values from summ_eval's MeteorMetric protocol run against the same jar (see docs/metrics.md)
    m = meteor.shared_meteor15()
    corpus, segments = m.score(["the cat sat on the mat", "hello there"], ["a cat sat on a mat", "hi there"])
    assert segments == pytest.approx([0.3980580516852713, 0.85])
    assert corpus == pytest.approx(0.43412236521548403)
    same, _ = m.score(["free parking is available"], ["free parking is available"])
    assert same == pytest.approx(1.0)
    assert meteor.meteor15(["a b"], ["a b"]).signature == meteor.meteor15_signature()


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_a_closed_meteor15_says_so():
    from ragdial.errors import RagdialError

    with meteor.Meteor15() as m:
        assert m.score(["free parking"], ["free parking"])[0] == pytest.approx(1.0)
    with pytest.raises(RagdialError, match=r"^METEOR 1.5 is closed$"):
        m.score(["free parking"], ["free parking"])


NLTK35 = json.loads((Path(__file__).parent / "fixtures" / "metrics" / "meteor_nltk35" / "expected.json").read_text())


def test_nltk35_semantics_equal_nltk_3_5_on_our_pairs(wordnet):
    """``expected.json`` was computed by nltk 3.5 itself (command inside); the installed nltk differs on some pairs,
    so the table tells the two apart."""
    from nltk.translate.meteor_score import single_meteor_score

    from ragdial.metrics.tokenizers import dstc9_normalize

    assert NLTK35["nltk"] == "3.5"
    differs = 0
    for row in NLTK35["pairs"]:
        ours = meteor.nltk35_single_meteor(row["ref"], row["hyp"], dstc9_normalize)
        assert abs(ours - row["meteor"]) <= 1e-12, row
        ref, hyp = dstc9_normalize(row["ref"]).split(), dstc9_normalize(row["hyp"]).split()
        differs += abs(single_meteor_score(ref, hyp) - row["meteor"]) > 1e-9
    assert differs > 0
    score = meteor.dstc9_meteor("he is fast", "he is quick", dstc9_normalize)
    assert score.signature == meteor.nltk35_meteor_signature() and "nltk-3.5" in score.signature
