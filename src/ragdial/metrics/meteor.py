"""METEOR two ways: nltk's (needs WordNet; DSTC9) and METEOR 1.5 in Java (DSTC11, through summ_eval).

WordNet: nltk looks in its data path; where ``nltk.download`` is impossible we build an NLTK corpus folder from the
Debian package ``wordnet-base`` (``/usr/share/wordnet``, or ``$RAGDIAL_WORDNET_DIR``) under the ragdial cache:
the WordNet 3.0 database files, a ``lexnames`` file and an empty ``index.sense`` (sense keys are not used by METEOR).

METEOR 1.5: the jar and ``data/paraphrase-en.gz`` shipped in PyPI's ``pycocoevalcap``; Java on the PATH. It is run
exactly as summ_eval's ``MeteorMetric`` runs it: ``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm`` with
``LC_ALL=C`` in the jar's folder, one ``SCORE ||| ref ||| hyp`` line per segment (whitespace runs squeezed, ``|||``
removed from the hypothesis), then one ``EVAL`` line; the corpus score is the last line METEOR prints.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

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
        self._process = subprocess.Popen(
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
            self._process.stdin.close()
            self._process.kill()
            self._process.wait()
            self._process = None

    def _ask(self, line: str) -> None:
        self._process.stdin.write(line.encode("utf-8") + b"\n")
        self._process.stdin.flush()

    def _read(self) -> str:
        line = self._process.stdout.readline()
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
