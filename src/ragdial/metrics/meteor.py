"""METEOR three ways: nltk's as released in 3.5 (DSTC9's official scores), the installed nltk's, both needing
WordNet, and METEOR 1.5 in Java (DSTC11, through summ_eval).

WordNet: nltk looks in its data path; where ``nltk.download`` is impossible we build an NLTK corpus folder from the
Debian package ``wordnet-base`` (``/usr/share/wordnet``, or ``$RAGDIAL_WORDNET_DIR``) under the ragdial cache:
the WordNet 3.0 database files, a ``lexnames`` file and an empty ``index.sense`` (sense keys are not used by METEOR).

METEOR 1.5: the jar and ``data/paraphrase-en.gz`` shipped in PyPI's ``pycocoevalcap``; Java on the PATH. It is run
exactly as summ_eval's ``MeteorMetric`` runs it: ``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm`` with
``LC_ALL=C`` in the jar's folder, one ``SCORE ||| ref ||| hyp`` line per segment (whitespace runs squeezed, ``|||``
removed from the hypothesis), then one ``EVAL`` line; the corpus score is the last line METEOR prints.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO

from ragdial.errors import RagdialError
from ragdial.metrics.result import Score, signature
from ragdial.paths import cache_dir

DEBIAN_WORDNET = Path("/usr/share/wordnet")
WORDNET_FILES = (
    "adj.exc",
    "adv.exc",
    "cntlist.rev",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "noun.exc",
    "verb.exc",
)
# WordNet 3.0 lexicographer files, in file-number order (see lexnames(5WN)); the syntactic category follows.
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


class WordNetMissing(RagdialError):
    """WordNet is neither in nltk's data path nor installed as the Debian package."""


def _nltk_has_wordnet() -> bool:
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
        return True
    except LookupError:
        try:
            nltk.data.find("corpora/wordnet.zip")
            return True
        except LookupError:
            return False


def build_wordnet(source: Path, nltk_dir: Path) -> Path:
    """Copy a WordNet 3.0 database (Debian layout) into ``nltk_dir/corpora/wordnet`` in the form nltk reads."""
    target = nltk_dir / "corpora" / "wordnet"
    if (target / "lexnames").is_file():
        return target
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        raise WordNetMissing(f"{source} is not a WordNet 3.0 database (missing {', '.join(missing)})")
    tmp = target.with_name(f".wordnet.{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in WORDNET_FILES:
        shutil.copyfile(source / name, tmp / name)  # nltk refuses symlinks that leave its root
    lines = [f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)]
    (tmp / "lexnames").write_text("".join(lines), encoding="ascii")
    (tmp / "index.sense").write_text("", encoding="ascii")
    try:
        tmp.rename(target)
    except OSError:  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@lru_cache(maxsize=1)
def ensure_wordnet() -> str:
    """Make WordNet loadable by nltk; returns where it comes from. Raises :class:`WordNetMissing` otherwise."""
    import nltk

    if _nltk_has_wordnet():
        return "nltk_data"
    nltk_dir = cache_dir() / "nltk_data"
    source = Path(os.environ.get("RAGDIAL_WORDNET_DIR", DEBIAN_WORDNET))
    if (nltk_dir / "corpora" / "wordnet" / "lexnames").is_file():
        source = nltk_dir / "corpora" / "wordnet"  # built before
    elif not source.is_dir():
        raise WordNetMissing(
            "nltk METEOR needs WordNet: install the Debian package wordnet-base (apt-get install wordnet-base), "
            "set RAGDIAL_WORDNET_DIR to a WordNet 3.0 dict folder, or run nltk.download('wordnet') where online"
        )
    build_wordnet(source, nltk_dir)
    if str(nltk_dir) not in nltk.data.path:
        nltk.data.path.insert(0, str(nltk_dir))
    return str(source)


@lru_cache(maxsize=1)
def nltk_meteor_signature() -> str:
    import nltk

    return signature("meteor", impl=f"nltk-{nltk.__version__}", wordnet="3.0", tok="dstc9", agg="sentence")


def nltk_meteor(hypothesis: Sequence[str], reference: Sequence[str]) -> Score:
    """nltk ``single_meteor_score`` on token lists (alpha 0.9, beta 3, gamma 0.5, Porter stems, WordNet synonyms)."""
    ensure_wordnet()
    from nltk.translate.meteor_score import single_meteor_score

    return Score("meteor", float(single_meteor_score(list(reference), list(hypothesis))), nltk_meteor_signature())


# ---- nltk 3.5 semantics (the DSTC9 official scores were produced with it)


def _match_exact(hypothesis: list[tuple[int, str]], reference: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """nltk 3.5 ``_match_enums``: last hypothesis word first, each to the last equal reference word; pops both."""
    matches = []
    for i in range(len(hypothesis))[::-1]:
        for j in range(len(reference))[::-1]:
            if hypothesis[i][1] == reference[j][1]:
                matches.append((hypothesis[i][0], reference[j][0]))
                hypothesis.pop(i)
                reference.pop(j)
                break
    return matches


def _synonyms(word: str) -> set[str]:
    from nltk.corpus import wordnet

    names = {lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas()}
    return {name for name in names if "_" not in name} | {word}


def nltk35_single_meteor(
    reference: str,
    hypothesis: str,
    preprocess: Callable[[str], str] = str.lower,
    alpha: float = 0.9,
    beta: float = 3,
    gamma: float = 0.5,
) -> float:
    """``nltk.translate.meteor_score.single_meteor_score`` as released in nltk 3.5 (strings, split after
    ``preprocess``). It differs from nltk >= 3.6 in two ways that change scores: words matched by their Porter stem
    are not removed before the WordNet stage (its filter compares an index with tuples and keeps every word), so they
    can be matched a second time, and the WordNet stage compares the words themselves, not their stems."""
    ensure_wordnet()
    from nltk.stem.porter import PorterStemmer

    stemmer = PorterStemmer()
    hyp = list(enumerate(preprocess(hypothesis).split()))
    ref = list(enumerate(preprocess(reference).split()))
    length_hyp, length_ref = len(hyp), len(ref)
    exact = _match_exact(hyp, ref)
    stems = _match_exact([(i, stemmer.stem(w)) for i, w in hyp], [(j, stemmer.stem(w)) for j, w in ref])
    synonyms = []
    for i in range(len(hyp))[::-1]:
        candidates = _synonyms(hyp[i][1])
        for j in range(len(ref))[::-1]:
            if ref[j][1] in candidates:
                synonyms.append((hyp[i][0], ref[j][0]))
                hyp.pop(i)
                ref.pop(j)
                break
    matches = sorted(exact + stems + synonyms, key=lambda pair: pair[0])
    count = len(matches)
    if count == 0 or length_hyp == 0 or length_ref == 0:
        return 0.0
    precision, recall = count / length_hyp, count / length_ref
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    chunks = 1
    for a, b in itertools.pairwise(matches):
        if not (b[0] == a[0] + 1 and b[1] == a[1] + 1):
            chunks += 1
    return (1 - gamma * (chunks / count) ** beta) * fmean


def nltk35_meteor_signature() -> str:
    return signature("meteor", impl="nltk-3.5-semantics", wordnet="3.0", tok="dstc9", agg="sentence")


def dstc9_meteor(hypothesis: str, reference: str, preprocess: Callable[[str], str]) -> Score:
    """METEOR as DSTC9's ``scores.py`` computed it: ``single_meteor_score(ref, hyp, normalize)`` under nltk 3.5."""
    return Score("meteor", nltk35_single_meteor(reference, hypothesis, preprocess), nltk35_meteor_signature())


def meteor_jar() -> Path:
    """The METEOR 1.5 jar shipped by pycocoevalcap."""
    import importlib.util

    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        raise RagdialError("METEOR 1.5 needs pycocoevalcap (pip install 'ragdial[meteor]')")
    jar = Path(next(iter(spec.submodule_search_locations))) / "meteor" / "meteor-1.5.jar"
    if not jar.is_file() or not (jar.parent / "data" / "paraphrase-en.gz").is_file():
        raise RagdialError(f"METEOR 1.5 jar or its paraphrase table not found next to {jar}")
    return jar


class Meteor15:
    """A running METEOR 1.5 process (``with Meteor15() as m: m.score(hyps, refs)``)."""

    def __init__(self, memory: str = "2G") -> None:
        java = shutil.which("java")
        if java is None:
            raise RagdialError("METEOR 1.5 needs Java on the PATH (Debian: default-jre-headless)")
        jar = meteor_jar()
        env = {**os.environ, "LC_ALL": "C"}
        command = [java, "-jar", f"-Xmx{memory}", str(jar), "-", "-", "-stdio", "-l", "en", "-norm"]
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
            command,
            cwd=jar.parent,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def __enter__(self) -> Meteor15:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None:
            if self._process.stdin is not None:
                self._process.stdin.close()
            self._process.kill()
            self._process.wait()
            self._process = None

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        """The process's stdin and stdout (an error once it is closed)."""
        if self._process is None or self._process.stdin is None or self._process.stdout is None:
            raise RagdialError("METEOR 1.5 is closed")
        return self._process.stdin, self._process.stdout

    def _ask(self, line: str) -> None:
        stdin, _ = self._pipes()
        stdin.write(line.encode("utf-8") + b"\n")
        stdin.flush()

    def _read(self) -> str:
        line = self._pipes()[1].readline()
        if not line:
            raise RagdialError("METEOR 1.5 stopped unexpectedly (is Java 8+ installed and 2 GB of memory free?)")
        return line.decode("utf-8").strip()

    def score(self, hypotheses: Sequence[str], references: Sequence[str | Sequence[str]]) -> tuple[float, list[float]]:
        """Corpus METEOR and the per-segment scores."""
        if not hypotheses:
            return 0.0, []
        import re

        with self._lock:
            stats = []
            for hypothesis, refs in zip(hypotheses, references, strict=True):
                refs = [refs] if isinstance(refs, str) else list(refs)
                line = " ||| ".join(("SCORE", " ||| ".join(refs), hypothesis.replace("|||", "")))
                self._ask(re.sub(r"\s+", " ", line))
                stats.append(self._read())
            self._ask("EVAL ||| " + " ||| ".join(stats))
            segments = [float(self._read()) for _ in hypotheses]
            return float(self._read()), segments


def meteor15_signature() -> str:
    return signature("meteor", impl="meteor-1.5-jar", lang="en", norm=True, agg="corpus")


@lru_cache(maxsize=1)
def shared_meteor15() -> Meteor15:
    """One METEOR 1.5 process per Python process (loading the paraphrase table takes seconds), closed at exit."""
    import atexit

    process = Meteor15()
    atexit.register(process.close)
    return process


def meteor15(hypotheses: Sequence[str], references: Sequence[str]) -> Score:
    """Corpus METEOR 1.5 (as summ_eval's ``MeteorMetric.evaluate_batch``)."""
    value, _ = shared_meteor15().score(hypotheses, references)
    return Score("meteor", value, meteor15_signature())
