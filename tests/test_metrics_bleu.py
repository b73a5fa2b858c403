"""BLEU: hand-computed values, agreement with nltk (DSTC9's implementation) and sacrebleu (DSTC11's)."""

from __future__ import annotations

import math
import random
import warnings

import pytest

from ragdial.metrics import bleu


def test_sentence_bleu_by_hand():
    # hyp "the cat sat on mat", ref "the cat sat on the mat": p1 = 5/5, p2 = 3/4 ("on mat" is not in the
    # reference), c = 5, r = 6 -> bp = exp(1 - 6/5)
    score = bleu.sentence_bleu("the cat sat on mat", "the cat sat on the mat", n=2, tokenizer="whitespace")
    assert score.value == pytest.approx(math.exp(1 - 6 / 5) * math.sqrt(3 / 4), rel=1e-12)
    assert "tok:whitespace" in score.signature and "smooth:none" in score.signature and "n:2" in score.signature


def test_no_unigram_match_is_zero_and_missing_order_is_tiny():
    assert bleu.sentence_bleu("x y", "a b", n=4, tokenizer="whitespace").value == 0.0
    # unigrams match, no bigram does: nltk method0 uses float min for p2, so the score is ~1e-154, not 0
    value = bleu.sentence_bleu("b a", "a b", n=2, tokenizer="whitespace").value
    assert 0 < value < 1e-100


def test_futuredial_epsilon_bleu_by_hand():
    # one pair, chars: hyp 好的谢谢 (4 chars), ref 好的 (2 chars): p1 = 2/4, p2 = 1/3, p3 = 0, p4 = 0
    stats = bleu.BleuStats(4)
    stats.add(list("好的谢谢"), [list("好的")])
    e = 1e-7
    precisions = [2 / (4 + e) + e, 1 / (3 + e) + e, 0 / (2 + e) + e, 0 / (1 + e) + e]
    expected = math.exp(sum(0.25 * math.log(p) for p in precisions))  # c > r: bp = 1
    assert bleu.bleu_from_stats(stats, [0.25] * 4, "epsilon") == pytest.approx(expected, rel=1e-12)
    # whitespace is dropped, punctuation kept
    score = bleu.corpus_bleu(["好 的，谢谢"], ["好的，谢谢"], 4, "chars", "epsilon")
    assert score.value == pytest.approx(1.0, abs=1e-5)


def test_agrees_with_nltk_on_random_segments():
    from nltk.translate.bleu_score import corpus_bleu, sentence_bleu

    rng = random.Random(7)
    vocab = list("abcdefg")
    for _ in range(60):
        pairs = []
        for _ in range(rng.randint(1, 4)):
            hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 9))]
            ref = [rng.choice(vocab) for _ in range(rng.randint(1, 9))]
            pairs.append((hyp, ref))
        for n in (1, 2, 3, 4):
            weights = [1.0 / n] * n
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected_corpus = corpus_bleu([[r] for _, r in pairs], [h for h, _ in pairs], weights)
                expected_sentence = sentence_bleu([pairs[0][1]], pairs[0][0], weights)
            stats = bleu.BleuStats(n)
            for hyp, ref in pairs:
                stats.add(hyp, [ref])
            assert bleu.bleu_from_stats(stats, weights) == pytest.approx(expected_corpus, rel=1e-12, abs=1e-300)
            one = bleu.BleuStats(n)
            one.add(*pairs[0][:1], [pairs[0][1]])
            assert bleu.bleu_from_stats(one, weights) == pytest.approx(expected_sentence, rel=1e-12, abs=1e-300)


def test_sacrebleu_wrapper_equals_sacrebleu():
    import sacrebleu

    hyps = ["The hotel has free parking.", "Rooms are clean", ""]
    refs = ["Yes, the hotel offers free parking.", "The rooms are very clean.", "Anything else?"]
    score = bleu.sacrebleu_corpus_bleu(hyps, refs)
    assert score.value == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score / 100)
    assert score.signature.startswith("sacrebleu|nrefs:1|") and "tok:13a" in score.signature
    assert bleu.sacrebleu_corpus_bleu([], []).value == 0.0


def test_mean_sentence_bleu_and_bad_input():
    score = bleu.mean_sentence_bleu(["a b", "c d"], ["a b", "x y"], n=1, tokenizer="whitespace")
    assert score.value == pytest.approx(0.5)
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        bleu.corpus_bleu(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="unknown smoothing"):
        bleu.bleu_from_stats(bleu.BleuStats(1), [1.0], "floor")
