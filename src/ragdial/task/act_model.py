"""A learned dialog-act classifier next to the rule layer of ``ragdial.task.acts``.

The rule layer's word lists fit the phrasing of the people who wrote them; a user who says "成吧，就它了" or
"这都不知道？" in another way falls through to out-of-scope. ``ActModel`` learns which acts a turn holds from
labelled utterances (the utterance banks' ``train`` and ``dev`` halves, never ``test``) and is combined with the
rules, which stay in charge of what they are reliable at: slots, codes, dates, the order of a compound turn.

Features (all sparse, rows L2-normalised per block): character 1–3-gram TF-IDF of the turn (the project's
``NgramTfidf``), the same n-grams again in a block of the context's group (a yes/no is expected, offers are
listed, a slot is asked, nothing is under way: the same words mean different acts there), and indicator
features of the context (open question, domain, offers, bookings, question mark, length) and of the rule layer's
reading (which acts the rules found). The head is ``LinearHead`` (multi-label logistic regression: a turn can
hold several acts).

Combination (``ActReader``): when the model's act set equals the rules' (inform and modify counted as one: which
of the two is the rules' call, from whether the slot already has a value), the rules' acts are kept as they are.
When it differs and the model is sure enough (it holds some act at 0.5 or more, and the acts it adds outscore
the acts it drops by ``margin``; a ``confirm`` the rules did not hear needs 0.8 and a turn that is no question,
since a yes books), the acts are rebuilt: acts both agree on keep their rule slots and order; an act only the
model found gets its slots from the rule layer's slot finders for that act (none for confirm, deny,
out_of_scope, greeting, thanks); an act only the rules found is dropped. Cancelling or changing a booking and
taking a constraint back (不限预算) are the rules' alone (the banks have none), and so is a choice of another offer
during a read-back (第二个) or among the alternatives offered when nothing matched. Whatever was combined then
passes ``acts.no_yes_in_questions``: a question is never a yes. Everything is deterministic. Training
(``reader_for``) takes about 7 s on a quiet machine, most of it the rules reading the training lines; it happens
once per process, bank and code version, and the fitted model is kept in the cache folder for the next process.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import numpy as np
from scipy import sparse

from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.schema import Speaker, Turn
from ragdial.task import acts as A
from ragdial.task.acts.text import _is_english
from ragdial.task.db import Gazetteer
from ragdial.understanding.features import NgramTfidf
from ragdial.understanding.linear import LinearHead
from ragdial.understanding.saved import mapping, number, texts

BANK_DIR = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
TRAIN_BANKS = (BANK_DIR / "task_utterances_train.jsonl", BANK_DIR / "task_utterances.jsonl")
TRAIN_SPLITS = ("train", "dev")  # the locked test half is never read
RULES_ONLY = ("cancel_booking", "change_booking")  # the banks have no cancellations or changes: the rules decide
LABELS = tuple(a for a in A.ACTS if a not in RULES_ONLY)
YES_NO = ("confirm_booking", "offer_alternative", "anything_else", "confirm_cancel")
SLOT_QUESTIONS = ("dep_city", "arr_city", "city", "date", "domain", "max_price", "guests", "rooms", "change")
FLOOR = 0.3  # below 0.5 for every act, the likeliest act counts only from this probability on
CONFIRM_SURE = 0.8  # how sure the model must be of a yes the rules did not hear (a yes books)
QUESTION = re.compile(r"([?？]|吗|呢|么)\s*$|什么|啥|怎么")
# the order acts take in a compound turn when the rules did not say it (from how the banks' compounds are said)
ORDER = (
    "greeting",
    "out_of_scope",
    "deny",
    "select",
    "confirm",
    "modify",
    "inform",
    "request",
    "ask_about_booking",
    "cancel_booking",
    "change_booking",
    "thanks",
)


def _turns(texts: Sequence[str]) -> list[list[Turn]]:
    """Each text as a one-turn user context (what the n-gram blocks read)."""
    return [[Turn(Speaker.USER, text)] for text in texts]


def context_group(ctx: A.Context) -> str:
    """The kind of moment a turn is said in: the same words do different things there."""
    oq = ctx.open_question
    if oq in YES_NO:
        return "yes_no"
    if oq == "choose_offer":
        return "choose"
    if oq in SLOT_QUESTIONS:
        return "slot"
    return "open"


def context_tokens(text: str, ctx: A.Context, rule_names: Sequence[str] | None) -> list[str]:
    """Indicator features of the context and of the rule layer's reading."""
    stripped = text.strip()
    n = len(stripped)
    length = "1" if n <= 1 else "2" if n <= 2 else "4" if n <= 4 else "8" if n <= 8 else "16" if n <= 16 else "long"
    question = stripped.endswith(("?", "？", "吗", "呢", "吧？")) or "吗" in stripped
    group = context_group(ctx)
    tokens = [
        f"oq={ctx.open_question}",
        f"group={group}",
        f"domain={ctx.domain}",
        f"offers={bool(ctx.offers)}",
        f"bookings={bool(ctx.bookings)}",
        f"state={bool(ctx.state)}",
        f"len={length}",
        f"group={group}&len={length}",
        f"question={question}",
        f"group={group}&question={question}",
        f"english={_is_english(stripped)}",
    ]
    if rule_names is not None:
        names = list(rule_names)
        tokens.append("rules=" + "+".join(names))
        if names == ["out_of_scope"]:  # said with an out-of-scope cue word, or nothing else was understood
            cue = bool(
                A.OOS.search(stripped) or A.ASIDE_FORM.search(stripped.lower()) or A.ASIDE.search(stripped.lower())
            )
            tokens += [f"rule_oos_cue={cue}", f"group={group}&rule_oos_cue={cue}"]
        for name in dict.fromkeys(names):
            tokens += [f"rule={name}", f"group={group}&rule={name}"]
    return tokens


@dataclass
class ActModelConfig:
    """What the cross-validation chooses between (``benchmarks/task_act_model.py``); the defaults are its choice
    (5 folds over the 1,019 train + dev lines: held-out act accuracy 0.925, the rules alone 0.890)."""

    c: float = 300.0
    ngram_max: int = 3
    grouped_ngrams: bool = False  # the n-grams again in a block per context group
    rule_features: bool = True  # the rules' reading as indicator features
    delexicalised: bool = False  # n-grams also of the text with cities, places, brands, districts, codes, digits masked
    margin: float = 0.0  # by how much the acts the model adds must outscore those it drops to override the rules


class ActModel:
    """Multi-label act classifier over (text, context[, the rules' reading])."""

    def __init__(self, config: ActModelConfig | None = None, gazetteer: Gazetteer | None = None) -> None:
        self.config = config or ActModelConfig()
        self.gazetteer = gazetteer
        self.ngrams = NgramTfidf(view="last_user", analyzer="char", ngram_range=(1, self.config.ngram_max))
        self.masked = NgramTfidf(view="last_user", analyzer="char", ngram_range=(1, self.config.ngram_max))
        self.tokens: dict[str, int] = {}
        self.head = LinearHead(mode="multilabel", solver="logistic", c=self.config.c)

    def _matrix(self, items: Sequence[tuple[str, A.Context, Sequence[str] | None]]) -> sparse.csr_matrix:
        texts = [text for text, _c, _r in items]
        grams = self.ngrams.transform(_turns(texts))
        blocks = [grams]
        if self.config.delexicalised:
            blocks.append(self.masked.transform(_turns([self._mask(t) for t in texts])))
        if self.config.grouped_ngrams:
            groups = ("yes_no", "choose", "slot", "open")
            for group in groups:
                mask = sparse.diags([float(context_group(c) == group) for _t, c, _r in items])
                blocks.append((mask @ grams).tocsr())
        rows, cols = [], []
        for row, (text, ctx, rules) in enumerate(items):
            for token in context_tokens(text, ctx, rules if self.config.rule_features else None):
                index = self.tokens.get(token)
                if index is not None:
                    rows.append(row)
                    cols.append(index)
        indicators = sparse.csr_matrix(
            (np.full(len(rows), 1.0, dtype=np.float32), (rows, cols)), shape=(len(items), len(self.tokens))
        )
        norms = np.sqrt(np.asarray(indicators.sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        indicators = sparse.diags(1.0 / norms) @ indicators
        return sparse.hstack([*blocks, indicators], format="csr", dtype=np.float32)

    def _mask(self, text: str) -> str:
        """The text with entity names and numbers masked, so n-grams generalise over them."""
        text = re.sub(r"(?<![A-Za-z0-9])([A-Za-z]{1,2}\d{2,4})(?![A-Za-z0-9])", "Ⓒ", text)
        text = re.sub(r"\d+", "⑨", text)
        gaz = self.gazetteer
        if gaz is None:
            return text
        for names, mark in _entity_names(gaz):
            for name in names:
                if name in text:
                    text = text.replace(name, mark)
        return text

    def fit(
        self, items: Sequence[tuple[str, A.Context, Sequence[str] | None]], targets: Sequence[Sequence[str]]
    ) -> ActModel:
        self.ngrams.fit(_turns([text for text, _c, _r in items]))
        if self.config.delexicalised:
            self.masked.fit(_turns([self._mask(text) for text, _c, _r in items]))
        vocabulary: dict[str, int] = {}
        for text, ctx, rules in items:
            for token in context_tokens(text, ctx, rules if self.config.rule_features else None):
                vocabulary.setdefault(token, len(vocabulary))
        self.tokens = vocabulary
        self.head.fit(self._matrix(items), [sorted(set(t)) for t in targets], LABELS)
        return self

    def save(self, path: Path) -> None:
        """``path``.json (configuration, vocabularies, classes) and ``path``.npz (arrays); nothing pickled."""
        blocks = {"ngrams": self.ngrams, "masked": self.masked}
        data: JSONDict = {"config": self.config.__dict__, "tokens": self.tokens, "classes": self.head.classes}
        arrays: dict[str, np.ndarray] = {"weights": self.head.weights, "bias": self.head.bias}
        for name, block in blocks.items():
            state, block_arrays = block.state()
            data[name] = state
            arrays.update({f"{name}.{k}": v for k, v in block_arrays.items()})
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        save: Any = np.savez  # Any: numpy (its stub types the keyword arrays as its own flags)
        save(tmp, **arrays)
        tmp.replace(path.with_suffix(".npz"))
        path.with_suffix(".json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: Path, gazetteer: Gazetteer | None = None) -> ActModel:
        data = mapping(json.loads(path.with_suffix(".json").read_text(encoding="utf-8")), "act model")
        with np.load(path.with_suffix(".npz")) as npz:
            arrays = {k: npz[k] for k in npz.files}
        make_config: Callable[..., ActModelConfig] = ActModelConfig  # the dataclass checks the saved fields
        model = cls(make_config(**mapping(data["config"], "config")), gazetteer)
        model.ngrams.load_state(mapping(data["ngrams"], "ngrams"), _prefixed(arrays, "ngrams."))
        model.masked.load_state(mapping(data["masked"], "masked"), _prefixed(arrays, "masked."))
        model.tokens = {
            token: int(number(index, "tokens")) for token, index in mapping(data["tokens"], "tokens").items()
        }
        model.head.classes = [*texts(data["classes"], "classes")]
        model.head.weights, model.head.bias = arrays["weights"], arrays["bias"]
        return model

    def probabilities(self, items: Sequence[tuple[str, A.Context, Sequence[str] | None]]) -> list[dict[str, float]]:
        probs = self.head.probabilities(self._matrix(items))
        return [dict(zip(map(str, self.head.classes), map(float, row), strict=True)) for row in probs]


def _prefixed(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}


def _entity_names(gaz: Gazetteer) -> list[tuple[list[str], str]]:
    def longest_first(names: Iterable[str]) -> list[str]:
        return sorted({n for n in names if len(n) >= 2 and not n.isascii()}, key=len, reverse=True)

    brands = longest_first([*gaz.brands, *(b.replace("酒店", "") for b in gaz.brands)])
    return [
        (longest_first(gaz.places), "Ⓟ"),
        (brands, "Ⓑ"),
        (longest_first(gaz.cities), "Ⓐ"),
        (longest_first(gaz.districts), "Ⓓ"),
    ]


def _families(names: set[str]) -> set[str]:
    return {"inform" if n == "modify" else n for n in names}


def predicted_set(probs: dict[str, float], threshold: float = 0.5) -> set[str]:
    """The acts at or over ``threshold``, or the likeliest one."""
    chosen = {a for a, p in probs.items() if p >= threshold}
    return chosen or {max(probs, key=probs.__getitem__)}


def combine(
    rule_acts: list[A.Act],
    probs: dict[str, float],
    margin: float,
    fill: Callable[[str], JSONDict],
    text: str = "",
) -> list[A.Act]:
    """The acts of a turn ``text`` from the rules' reading and the model's probabilities (see the module
    docstring). ``fill(act)`` gives the slots of an act only the model found."""
    rule_names = [a.act for a in rule_acts]
    if set(RULES_ONLY) & set(rule_names):  # the banks teach nothing about cancelling or changing: the rules decide
        return rule_acts
    if any(v is None for a in rule_acts for v in a.slots.values()):
        return rule_acts  # 不限预算 (a constraint taken back): the banks have none either
    wanted = {a for a, p in probs.items() if p >= 0.5}
    likeliest = max(probs, key=probs.__getitem__)
    if not wanted and probs[likeliest] >= FLOOR:
        wanted = {likeliest}
    if not wanted:
        return rule_acts  # the model is sure of no act: the rules' reading stands
    have = set(rule_names)
    wanted |= {a for a in have if probs.get(a, 0.0) >= FLOOR}  # a rules' act is dropped only when the model doubts it
    if _families(wanted) == _families(have):
        return rule_acts  # inform vs modify is the rules' call: whether the slot already has a value
    added = {a for a in wanted - have if not _families({a}) & _families(have)}
    dropped = {a for a in have - wanted if not _families({a}) & _families(wanted)}
    gap = min((probs[a] for a in added), default=1.0) - max((probs.get(a, 0.0) for a in dropped), default=0.0)
    if gap < margin:
        return rule_acts
    if "confirm" in added and (probs["confirm"] < CONFIRM_SURE or QUESTION.search(text)):
        return rule_acts  # a booking is made on a yes the model is sure of, and a question is never a yes
    if wanted == {"out_of_scope"}:
        return [A.Act("out_of_scope")]
    kept = [a for a in rule_acts if _families({a.act}) & _families(wanted)]  # (inform and modify: one family)
    for name in sorted(added, key=ORDER.index):
        act = A.Act(name, {} if name == "out_of_scope" else fill(name))
        position = next((i for i, k in enumerate(kept) if ORDER.index(k.act) > ORDER.index(name)), len(kept))
        kept.insert(position, act)
    return kept


class ActReader:
    """``understand`` with the learned model combined in; called like ``acts.understand``."""

    def __init__(self, model: ActModel, gazetteer: Gazetteer, today: dt.date) -> None:
        self.model, self.gaz, self.today = model, gazetteer, today

    def __call__(self, text: str, context: A.Context | JSONObject | None, by_sound: bool = True) -> list[A.Act]:
        ctx = context if isinstance(context, A.Context) else A.Context.from_dict(context)
        text = A.said_plainly(text, ctx)  # (哦对了，… is no yes to the model either; 确认改签 is a yes to it too)
        rule_acts = A.understand(text, ctx, self.gaz, self.today, by_sound)
        if A.rules_decide(text, ctx, rule_acts):  # what the banks have no examples of: the rules decide
            return A.no_yes_in_questions(rule_acts, text)
        probs = self.model.probabilities([(text, ctx, [a.act for a in rule_acts])])[0]
        margin = self.model.config.margin
        acts = combine(rule_acts, probs, margin, lambda name: self._fill(name, text, ctx, by_sound), text)
        return A.no_yes_in_questions(acts, text)  # a question is never a yes, whatever the model heard

    def _fill(self, name: str, text: str, ctx: A.Context, by_sound: bool) -> JSONDict:
        return A.slots_for(name, text, ctx, self.gaz, self.today, by_sound)


class BankAct(TypedDict):
    act: str
    slots: NotRequired[JSONDict]


class BankRow(TypedDict):
    """A labelled line of an utterance bank (``benchmarks/data/README_task_utterances.md``)."""

    split: str
    text: str
    context: JSONDict | None
    acts: list[BankAct]


def _bank_row(path: Path, line_no: int, row: object) -> BankRow:
    """``row`` checked as a bank line: a text, a context object (or null) and a list of acts with names."""
    fine = (
        isinstance(row, dict)
        and isinstance(row.get("text"), str)
        and isinstance(row.get("context") or {}, dict)
        and isinstance(row.get("acts"), list)
        and all(isinstance(a, dict) and isinstance(a.get("act"), str) for a in row["acts"])
    )
    if not fine:
        raise ValueError(f"{path}: line {line_no}: not a bank line (text, context, acts with names)")
    return cast(BankRow, row)


def bank_rows(paths: Sequence[Path] = TRAIN_BANKS, splits: Sequence[str] = TRAIN_SPLITS) -> list[BankRow]:
    """The labelled lines of the given splits (test lines are skipped unread)."""
    rows: list[BankRow] = []
    for path in paths:
        if not path.is_file():
            continue
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row: object = json.loads(line)
            if isinstance(row, dict) and row.get("split") in splits:
                rows.append(_bank_row(path, line_no, row))
    return rows


def training_items(
    rows: Sequence[BankRow], gazetteer: Gazetteer, today: dt.date
) -> tuple[list[tuple[str, A.Context, list[str]]], list[list[str]]]:
    """(text, context, the rules' act names) and the gold act names of bank lines."""
    items, targets = [], []
    for row in rows:
        ctx = A.Context.from_dict(row["context"])
        rules = [a.act for a in A.understand(row["text"], ctx, gazetteer, today)]
        items.append((row["text"], ctx, rules))
        targets.append([a["act"] for a in row["acts"]])
    return items, targets


_CACHE: dict[str, ActModel] = {}
_LOCK = threading.Lock()
# the rules' reading is a feature: a change of any of the act reader's modules or of this one retrains
_SOURCES = (*sorted(Path(A.__file__).parent.glob("*.py")), Path(__file__))


def reader_for(
    gazetteer: Gazetteer,
    today: dt.date,
    config: ActModelConfig | None = None,
    paths: Sequence[Path] = TRAIN_BANKS,
    cache: Path | None = None,
) -> ActReader | None:
    """A reader trained on the banks' train and dev lines, or None when no bank file is there (rules only).

    Trained once per process, bank contents, code and configuration (about 7 s on a quiet machine, most of it the
    rules reading the 1,000 training lines); the fitted model is kept under ``cache`` (default: the cache
    folder's ``task/``) so the next process loads it."""
    config = config or ActModelConfig()
    rows = bank_rows(paths)
    if not rows:
        return None
    key = json.dumps(
        [rows, config.__dict__, sorted(gazetteer.cities), [p.read_text(encoding="utf-8") for p in _SOURCES]],
        ensure_ascii=False,
        sort_keys=True,
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    with _LOCK:
        model = _CACHE.get(digest)
        if model is None:
            from ragdial.paths import cache_dir

            path = (cache or cache_dir() / "task") / f"act_model-{digest}"
            try:
                model = ActModel.load(path, gazetteer)
            except (OSError, ValueError, KeyError, TypeError):  # missing, or saved by other code: train again
                bank_today = dt.date(2026, 12, 1)  # the banks' "today": the dates in their lines count from it
                items, targets = training_items(rows, gazetteer, bank_today)
                model = ActModel(config, gazetteer).fit(items, targets)
                with contextlib.suppress(OSError):  # a read-only cache: train again next time
                    model.save(path)
            _CACHE[digest] = model
    return ActReader(model, gazetteer, today)
