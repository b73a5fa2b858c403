"""The simulated user's phrasing, drawn from the **dev half** of the utterance bank (written by another hand).

``Phrases.load(path)`` keeps only lines with ``split == "dev"`` (the test half is never looked at) and sorts them
by what they do: plain confirmations, refusals, thanks, greetings, out-of-scope turns (many name a city, a date
or a number), booking questions, and templates for choosing an offer (ordinal, code, price, brand, district,
cheapest) and for changing the date, with the value cut out (``{n}``, ``{code}``, ``{price}``, ``{brand}``,
``{district}``, ``{date}``). Without the bank file, a few built-in phrases of each kind stand in.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_BANK = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "task_utterances.jsonl"
DATE_SURFACE = re.compile(
    r"(大后天|后天|明天|今天|这周末|下周末|(?:下下|下|这|本)?周[一二三四五六日天]|\d{1,2}月\d{1,2}[日号]|\d{1,2}号)"
)
BUILT_IN = {
    "confirm": ["确定", "好的", "可以", "没问题"],
    "deny": ["不要了", "先不订"],
    "thanks": ["谢谢", "好的谢谢"],
    "greeting": ["你好", "您好"],
    "oos": ["北京今天多少度", "今天几号来着", "你叫什么名字"],
    "ask_booking": ["我刚订的票订上了吗？", "订单号再说一遍"],
    "select_ordinal": ["第{n}个", "要第{n}个"],
    "select_code": ["{code}", "就{code}吧"],
    "select_price": ["{price}的那个"],
    "select_brand": ["{brand}那家"],
    "select_district": ["{district}那家"],
    "select_cheapest": ["最便宜的"],
    "modify_date": ["改成{date}吧"],
}


@dataclass
class Phrases:
    """Phrases and templates per kind; ``pick(kind, rng)`` chooses one."""

    by_kind: dict[str, list[str]] = field(default_factory=lambda: {k: list(v) for k, v in BUILT_IN.items()})
    ask_by_domain: dict[str, list[str]] = field(default_factory=dict)
    source: str = "built-in"

    def pick(self, kind: str, rng: random.Random) -> str:
        return rng.choice(self.by_kind.get(kind) or BUILT_IN[kind])

    def ask_booking(self, domain: str | None, rng: random.Random) -> str:
        pool = (self.ask_by_domain.get(domain or "") or []) + self.by_kind.get("ask_booking", [])
        return rng.choice(pool or BUILT_IN["ask_booking"])

    @classmethod
    def load(cls, path: str | Path | None = None) -> Phrases:
        path = Path(path) if path else DEFAULT_BANK
        if not path.is_file():
            return cls()
        kinds: dict[str, list[str]] = {k: [] for k in BUILT_IN}
        ask_by_domain: dict[str, list[str]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if not row or row.get("split") != "dev":
                continue  # the test half stays locked
            _sort(row, kinds, ask_by_domain)
        for kind, values in kinds.items():
            if not values:
                kinds[kind] = list(BUILT_IN[kind])
        return cls({k: sorted(set(v)) for k, v in kinds.items()}, ask_by_domain, f"{path} (dev half)")


def _sort(row: dict, kinds: dict[str, list[str]], ask_by_domain: dict[str, list[str]]) -> None:
    text, acts = row["text"], row["acts"]
    names = [a["act"] for a in acts]
    open_q = (row.get("context") or {}).get("open_question")
    english = not re.search(r"[\u4e00-\u9fff]", text)
    if english:
        return  # the simulated user speaks Chinese
    if names == ["confirm"] and open_q == "confirm_booking":
        kinds["confirm"].append(text)
    elif names == ["deny"] and open_q == "confirm_booking":
        kinds["deny"].append(text)
    elif names == ["thanks"]:
        kinds["thanks"].append(text)
    elif names == ["greeting"]:
        kinds["greeting"].append(text)
    elif names == ["out_of_scope"]:
        kinds["oos"].append(text)
    elif names == ["ask_about_booking"]:
        domain = acts[0]["slots"].get("domain")
        if domain:
            ask_by_domain.setdefault(domain, []).append(text)
        elif not re.search(r"(几点|几号|成都|上午)", text):
            kinds["ask_booking"].append(text)
    elif names == ["select"] and len(acts[0]["slots"]) == 1:
        key, value = next(iter(acts[0]["slots"].items()))
        template = _template(text, key, value)
        if template:
            kinds[template[0]].append(template[1])
    elif names == ["modify"] and set(acts[0]["slots"]) == {"date"}:
        m = DATE_SURFACE.search(text)
        if m and not re.search(r"(不对|错了|入住|夜车)", text):
            kinds["modify_date"].append(text[: m.start()] + "{date}" + text[m.end() :])


def _template(text: str, key: str, value) -> tuple[str, str] | None:
    if key == "ordinal" and isinstance(value, int) and value > 0:
        m = re.search(r"(第|选)\s*([0-9一二三])", text)
        if m:
            return "select_ordinal", text[: m.start(2)] + "{n}" + text[m.end(2) :]
    if key == "code" and value.lower() in text.lower():
        start = text.lower().index(value.lower())
        return "select_code", text[:start] + "{code}" + text[start + len(value) :]
    if key == "price" and str(value) in text:
        return "select_price", text.replace(str(value), "{price}", 1)
    if key == "brand":
        short = value.replace("酒店", "").replace("快捷", "")
        for form in (value, short, short[:2]):
            if form in text:
                return "select_brand", text.replace(form, "{brand}", 1)
    if key == "district" and value in text:
        return "select_district", text.replace(value, "{district}", 1)
    if key == "feature" and value == "cheapest":
        return "select_cheapest", text
    return None
