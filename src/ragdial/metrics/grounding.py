"""Verified grounding: the factual claims of a reply checked against what it may rest on.

A claim is a number (with its unit: a price, an amount of data, a duration), a date or time, a plan or product name,
a yes/no eligibility statement, or a statement that an account action was done. A claim is supported when the cited
knowledge or the dialog says it: the same value in the same kind of unit, the same date, the same name; an
eligibility statement must state the condition of the cited item and, where the user's plan decides it, agree with
it; an action claim is never supported (the system performs no account action) unless a cited item says it
verbatim. Degenerate text (empty, runaway digits, repetition) is found apart from claims.

``check_grounding`` checks one reply; ``unsupported_claim_rate`` is the corpus metric over many.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragdial.jsontypes import JSONDict
from ragdial.metrics.result import Score, signature
from ragdial.schema import Knowledge, SourceKind, name_attribute

CLAIM_KINDS = ("number", "price", "data", "duration", "date", "name", "eligibility", "action")

# unit word → unit class; a number claim with a unit needs evidence of the same value in the same class
_UNITS = {
    "元": "price", "块": "price", "yuan": "price", "rmb": "price", "¥": "price",
    "gb": "data", "g": "data", "mb": "data", "m": "speed", "tb": "data",
    "分钟": "minutes", "minutes": "minutes", "minute": "minutes", "mins": "minutes", "min": "minutes",
    "小时": "hours", "hours": "hours", "hour": "hours",
    "天": "days", "days": "days", "day": "days", "个工作日": "days", "working days": "days",
    "个月": "months", "months": "months", "month": "months",
    "周岁": "age", "岁": "age", "years old": "age", "or over": "age", "or under": "age", "or older": "age",
    "or younger": "age",
    "年": "years", "years": "years", "year": "years",
    "%": "percent", "percent": "percent",
    "张": "count", "个": "count", "cards": "count", "lines": "count",
}  # fmt: skip
_DURATION = {"minutes", "hours", "days", "months", "years"}
_UNIT_RE = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_NUMBER = re.compile(rf"(?<![A-Za-z0-9.])(-?\d+(?:,\d{{3}})*(?:\.\d+)?)\s*({_UNIT_RE})?(?![a-z])", re.IGNORECASE)
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_DATE_PATTERNS = (
    re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
    re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"),
    re.compile(rf"({'|'.join(_MONTHS)})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})", re.IGNORECASE),
    re.compile(rf"(?<!\d)(\d{{1,2}})\s+({'|'.join(_MONTHS)}),?\s+(\d{{4}})", re.IGNORECASE),
    re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
    re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])"),
)
_LIST_MARK = re.compile(r"(?m)^\s*\d{1,2}[.、)]\s+")
_CODE = re.compile(r"[*#]+[\d*#]+[#*]|\+?\d[\d ]{6,}\d")  # dial codes (**21*...#) and phone numbers with spaces
_NAME_PATTERNS = (
    re.compile(r"青禾[\u4e00-\u9fffA-Za-z0-9]{1,12}?(?:套餐|卡|包|会员)(?:\d+元)?"),
    re.compile(r"Greenleaf(?:\s+(?:[A-Z0-9][A-Za-z0-9]*))+"),
)
_BRANDS = {"greenleaf mobile", "青禾移动"}
_ACTION = (
    re.compile(
        r"已(?:经)?(?:为您|给您|帮您|替您)?(?:成功)?(?:退订|开通|办理|取消|充值|缴费|预约|变更|更换|修改|关闭|打开|"
        r"转接|注销|挂失|报修|安排|订购|添加|设置|重置|续订|办好|处理)(?!的)"
        r"|(?:退订|开通|办理|取消|充值|预约|变更|订购|添加|设置|注销|挂失)(?:已经)?成功"
        r"|(?:帮|为|给)您(?:办|开|退|订|改|换|充)好了"
    ),
    re.compile(
        r"\b(?:has|have|had)\s+been\s+(?:successfully\s+)?(?:cancel+ed|activated|subscribed|added|booked|changed|"
        r"scheduled|topped\s+up|switched|unsubscribed|renewed|closed|processed|reset|set\s+up|turned\s+(?:on|off)|"
        r"enabled|disabled|upgraded|downgraded|blocked|reported|ported|arranged)\b"
        r"|\bI(?:'ve|\s+have)\s+(?:just\s+|now\s+|successfully\s+)?(?:cancel|activat|subscrib|add|book|chang|schedul|"
        r"topp|switch|unsubscrib|process|set|turn|enabl|disabl|upgrad|downgrad|block|report|port|arrang|renew|clos)"
        r"\w*"
        r"|\bis\s+now\s+(?:active|activated|cancel+ed|on|off|enabled|disabled)\b",
        re.IGNORECASE,
    ),
)
_ELIGIBLE = (
    re.compile(
        r"(?:不|没|无法|不能|不可以|不可|未)?(?:可以|能|能够|可)(?:办理|办|装|开通|申请|享受|使用|订)"
        r"|(?:不)?(?:符合|满足)(?:条件|要求|办理条件)?|有资格|没有资格|不够条件|够条件"
    ),
    re.compile(
        r"\b(?:not\s+)?(?:eligible|qualif(?:y|ies|ied))\b|\byou\s+(?:can(?:not|'t)?|could|may|are\s+(?:not\s+)?able\s+to)\s+"
        r"(?:get|apply|sign\s+up|subscribe|have|take|add|switch|join|use)\b|\bmeets?\s+the\s+(?:requirement|condition)",
        re.IGNORECASE,
    ),
)
_NEGATIVE = re.compile(r"不|没|无法|未|非|cannot|can't|can not|not|isn't|aren't|doesn't|don't|no\b|unable|below", re.I)
_CONDITION = re.compile(
    r"限|需|仅|只|须|要求|及以上|及以下|以上|以下|满\d|only|must|requires?|required|at least|or (?:over|above|more|"
    r"higher|under|younger|older|below)|aged|up to",
    re.IGNORECASE,
)
_PLAN_THRESHOLD = (
    re.compile(r"(\d+(?:\.\d+)?)\s*元及以上(?:的)?主?套餐"),
    re.compile(r"(\d+(?:\.\d+)?)[- ]yuan(?: main)?(?: plan)? or (?:above|more|higher)", re.IGNORECASE),
    re.compile(r"plan of (\d+(?:\.\d+)?) yuan or (?:above|more|higher)", re.IGNORECASE),
)
_PLAN_FEE = (
    re.compile(r"业务费用[：:]\s*(\d+(?:\.\d+)?)\s*元/月"),
    re.compile(r"Fee:\s*(\d+(?:\.\d+)?) yuan per month", re.IGNORECASE),
)
_SENTENCE = re.compile(r"[^。！？!?；;\n]+(?:[。！？!?；;\n]|$)|[^.]+(?:\.(?!\d)|$)")


@dataclass(frozen=True)
class Claim:
    """One checked claim: its kind, the text as the reply says it, whether it is supported, and by what (a
    knowledge id, ``dialog``, or why not)."""

    kind: str
    text: str
    supported: bool
    evidence: str = ""

    def to_dict(self) -> JSONDict:
        return {"kind": self.kind, "text": self.text, "supported": self.supported, "evidence": self.evidence}


@dataclass(frozen=True)
class GroundingCheck:
    """The claims of one reply and whether the text is degenerate (``"empty"``, ``"runaway digits"``,
    ``"repetition"``, else ``None``)."""

    claims: tuple[Claim, ...] = ()
    degenerate: str | None = None

    @property
    def unsupported(self) -> list[Claim]:
        return [c for c in self.claims if not c.supported]

    @property
    def ok(self) -> bool:
        return self.degenerate is None and not self.unsupported

    def to_dict(self) -> JSONDict:
        return {
            "claims": [c.to_dict() for c in self.claims],
            "unsupported": [c.to_dict() for c in self.unsupported],
            "degenerate": self.degenerate,
        }


@dataclass(frozen=True)
class Evidence:
    """What a reply may rest on: the cited items and the dialog's turns (the user's words, earlier replies);
    ``names`` are the plan/product names of the whole knowledge base, so that a name the reply uses but no cited
    item mentions is caught."""

    items: tuple[Knowledge, ...] = ()
    dialog: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    @classmethod
    def of(cls, items: Iterable[Knowledge], dialog: Iterable[str] = (), names: Iterable[str] = ()) -> Evidence:
        return cls(tuple(items), tuple(dialog), tuple(names))

    def texts(self) -> list[tuple[str, str]]:
        """(where, text) pairs: each item by id, then the dialog."""
        return [(item.id, item.text) for item in self.items] + [("dialog", t) for t in self.dialog]


def knowledge_names(items: Iterable[Knowledge]) -> tuple[str, ...]:
    """The plan/product names of ``items`` (their ``name`` field or the name attribute), longest first."""
    names = set()
    for item in items:
        fields = item.fields
        name = fields.get("name") or fields.get("title")
        attributes = fields.get("attributes")
        if not name and isinstance(attributes, dict):
            name = name_attribute(attributes)
        if isinstance(name, str) and len(name) >= 2:
            names.add(name)
    return tuple(sorted(names, key=lambda n: (-len(n), n)))


def check_grounding(text: str, evidence: Evidence) -> GroundingCheck:
    """Every claim of ``text`` checked against ``evidence``; degenerate text is reported and not checked."""
    reason = degenerate_reason(text)
    if reason is not None:
        return GroundingCheck((), reason)
    claims: list[Claim] = []
    rest = _LIST_MARK.sub(" ", text)
    rest = _claim_actions(rest, evidence, claims)
    rest = _claim_codes(rest, evidence, claims)
    rest = _claim_dates(rest, evidence, claims)
    rest = _claim_names(rest, evidence, claims)
    _claim_numbers(rest, evidence, claims)
    _claim_eligibility(text, evidence, claims)
    return GroundingCheck(tuple(claims))


def degenerate_reason(text: str) -> str | None:
    """Why ``text`` is not a usable reply: ``"empty"``, ``"runaway digits"`` (a run of 12+ digits or one digit
    8+ times in a row) or ``"repetition"`` (a phrase repeated 4+ times in a row, or mostly repeated text); else
    ``None``."""
    stripped = text.strip()
    if not stripped or not re.search(r"\w", stripped):
        return "empty"
    if re.search(r"\d{12,}", stripped) or re.search(r"(\d)\1{7,}", stripped):
        return "runaway digits"
    if re.search(r"(.{2,40}?)\1{3,}", stripped, re.DOTALL):
        return "repetition"
    sentences = [s.strip() for s in _SENTENCE.findall(stripped) if len(s.strip()) > 3]
    if len(sentences) >= 3 and len(set(sentences)) <= len(sentences) / 2:
        return "repetition"
    if len(stripped) > 120:
        grams = [stripped[i : i + 6] for i in range(len(stripped) - 5)]
        if len(set(grams)) < 0.35 * len(grams):
            return "repetition"
    return None


def cut_degenerate(text: str) -> str:
    """``text`` up to where it turns degenerate (the first repeated or runaway part), stripped."""
    cut = len(text)
    for pattern in (r"\d{12,}", r"(\d)\1{7,}", r"(.{2,40}?)\1{3,}"):
        match = re.search(pattern, text, re.DOTALL)
        if match:
            cut = min(cut, match.start())
    return text[:cut].strip()


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def _unit_class(unit: str | None) -> str | None:
    if not unit:
        return None
    return _UNITS.get(re.sub(r"\s+", " ", unit.lower()))


def _numbers(text: str) -> list[tuple[float, str | None, str]]:
    """(value, unit class, text) of each number in ``text`` (dates and times included as plain numbers)."""
    data = {m.start(): m for m in re.finditer(r"(\d+(?:\.\d+)?)\s*个?\s*G(?:B)?\b", text)}  # "10个G", "20GB"
    found = []
    for match in _NUMBER.finditer(text):
        if match.start() not in data:  # the same number read as an amount of data below: one claim
            found.append((_value(match.group(1)), _unit_class(match.group(2)), match.group(0)))
    for match in data.values():
        found.append((float(match.group(1)), "data", match.group(0)))
    return found


def _date_keys(text: str) -> set[tuple[str, ...]]:
    keys = set()
    for index, pattern in enumerate(_DATE_PATTERNS):
        for match in pattern.finditer(text):
            keys.add(_date_key(index, match))
    return keys


def _date_key(index: int, match: re.Match[str]) -> tuple[str, ...]:
    groups = match.groups()
    if index in (0, 1):
        return ("ymd", str(int(groups[0])), str(int(groups[1])), str(int(groups[2])))
    if index == 2:
        return ("ymd", groups[2], str(_MONTHS.index(groups[0].lower()) + 1), str(int(groups[1])))
    if index == 3:
        return ("ymd", groups[2], str(_MONTHS.index(groups[1].lower()) + 1), str(int(groups[0])))
    if index == 4:
        return ("md", str(int(groups[0])), str(int(groups[1])))
    return ("hm", str(int(groups[0])), groups[1])


def _supports_date(key: tuple[str, ...], evidence: Evidence) -> str:
    for where, text in evidence.texts():
        for known in _date_keys(text):
            if known == key or (key[0] == "md" and known[0] == "ymd" and known[2:] == key[1:]):
                return where
    return ""


def _claim_dates(text: str, evidence: Evidence, claims: list[Claim]) -> str:
    for index, pattern in enumerate(_DATE_PATTERNS):
        for match in pattern.finditer(text):
            where = _supports_date(_date_key(index, match), evidence)
            claims.append(Claim("date", match.group(0), bool(where), where))
        text = pattern.sub(" ", text)
    return text


def _claim_codes(text: str, evidence: Evidence, claims: list[Claim]) -> str:
    def compact(value: str) -> str:
        return re.sub(r"\s+", "", value)

    for match in _CODE.finditer(text):
        code = compact(match.group(0))
        where = next((w for w, t in evidence.texts() if code in compact(t)), "")
        claims.append(Claim("number", match.group(0), bool(where), where))
    return _CODE.sub(" ", text)


def _claim_names(text: str, evidence: Evidence, claims: list[Claim]) -> str:
    texts = [(where, _normal(t)) for where, t in evidence.texts()]
    for name in evidence.names:
        if name.lower() in text.lower():
            where = next((w for w, t in texts if name.lower() in t), "")
            claims.append(Claim("name", name, bool(where), where))
            text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    for pattern in _NAME_PATTERNS:
        for match in pattern.finditer(text):
            name = match.group(0).strip()
            if name.lower() in _BRANDS:
                continue
            where = next((w for w, t in texts if _normal(name) in t), "")
            claims.append(Claim("name", name, bool(where), where))
        text = pattern.sub(" ", text)
    return text


def _claim_numbers(text: str, evidence: Evidence, claims: list[Claim]) -> None:
    known = [(where, _numbers(t)) for where, t in evidence.texts()]
    for value, unit, said in _numbers(text):
        where = ""
        for place, numbers in known:
            if any(v == value and (unit is None or u is None or u == unit) for v, u, _ in numbers):
                where = place
                break
        kind = (
            "price" if unit == "price" else "data" if unit == "data" else "duration" if unit in _DURATION else "number"
        )
        claims.append(Claim(kind, said.strip(), bool(where), where))


def _claim_actions(text: str, evidence: Evidence, claims: list[Claim]) -> str:
    items = [(item.id, item.text) for item in evidence.items]
    for pattern in _ACTION:
        for match in pattern.finditer(text):
            phrase = match.group(0)
            where = next((w for w, t in items if phrase.lower() in t.lower()), "")
            claims.append(Claim("action", phrase, bool(where), where or "the system performs no account action"))
    return text


def _claim_eligibility(text: str, evidence: Evidence, claims: list[Claim]) -> None:
    conditions = [(item.id, item.text) for item in evidence.items if _CONDITION.search(item.text)]
    thresholds = [float(m.group(1)) for _, t in conditions for p in _PLAN_THRESHOLD for m in p.finditer(t)]
    fees = [
        float(m.group(1))
        for item in evidence.items
        if item.source == SourceKind.USER_PROFILE
        for p in _PLAN_FEE
        for m in p.finditer(item.text)
    ]
    for sentence in _SENTENCE.findall(text):
        match = next((m for p in _ELIGIBLE for m in [p.search(sentence)] if m), None)
        if match is None:
            continue
        said = sentence.strip()
        if not evidence.items:
            claims.append(Claim("eligibility", said, False, "no cited item"))
            continue
        if not conditions:
            claims.append(Claim("eligibility", said, True, evidence.items[0].id))
            continue
        negative = bool(_NEGATIVE.search(match.group(0))) or bool(_NEGATIVE.search(sentence[: match.start()][-6:]))
        if thresholds and fees:
            eligible = max(fees[:1]) >= min(thresholds)
            agrees = eligible != negative
            why = conditions[0][0] if agrees else f"the user's plan ({fees[0]:g}) vs the condition ({thresholds[0]:g})"
            claims.append(Claim("eligibility", said, agrees, why))
            continue
        stated = {v for v, _, _ in _numbers(sentence)}
        condition_values = {v for _, t in conditions for v, _, _ in _numbers(t)}
        words = _CONDITION.search(sentence)
        where = conditions[0][0] if (stated & condition_values or words) else ""
        claims.append(Claim("eligibility", said, bool(where), where or "the condition of the cited item is not stated"))


@dataclass(frozen=True)
class GroundingTotals:
    """Counts over many replies."""

    replies: int = 0
    claims: int = 0
    unsupported: int = 0
    replies_unsupported: int = 0
    degenerate: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        return {
            "replies": self.replies,
            "claims": self.claims,
            "unsupported": self.unsupported,
            "replies_unsupported": self.replies_unsupported,
            "degenerate": self.degenerate,
            "unsupported_by_kind": dict(self.by_kind),
        }


def grounding_totals(checks: Sequence[GroundingCheck]) -> GroundingTotals:
    by_kind: dict[str, int] = {}
    for check in checks:
        for claim in check.unsupported:
            by_kind[claim.kind] = by_kind.get(claim.kind, 0) + 1
    return GroundingTotals(
        replies=len(checks),
        claims=sum(len(c.claims) for c in checks),
        unsupported=sum(len(c.unsupported) for c in checks),
        replies_unsupported=sum(1 for c in checks if c.unsupported),
        degenerate=sum(1 for c in checks if c.degenerate),
        by_kind=by_kind,
    )


def unsupported_claim_rate(hypotheses: Sequence[str], evidences: Sequence[Evidence]) -> Score:
    """Share of replies with at least one unsupported claim or degenerate text (0 is the target): each reply's
    claims checked against its own evidence (the cited or gold knowledge and the dialog)."""
    if len(hypotheses) != len(evidences):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(evidences)} evidences")
    checks = [check_grounding(h, e) for h, e in zip(hypotheses, evidences, strict=True)]
    bad = sum(1 for c in checks if not c.ok)
    value = bad / len(checks) if checks else 0.0
    return Score("unsupported_claim_rate", value, signature("unsupported-claims", unit="reply", checker="v1"))
