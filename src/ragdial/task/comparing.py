"""Comparing the two ways to travel a route (坐飞机和坐火车哪个便宜 / 高铁和飞机哪个快): the cheapest or the
fastest of each, and which one wins; the user then says which to take."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ragdial.task import replies as R
from ragdial.task.values import as_int, as_str

_FLY = r"(飞机|机票|航班|坐飞|flight|plane|fly)"
_RAIL = r"(火车|高铁|动车|车票|列车|坐车|train|rail)"
_WHICH = r"(哪个|哪种|哪样|比较|对比|相比|比起|差多少|划算|which|compare|cheaper|faster|还是.{2,12}(呢|吗|？|\?))"
FAST = re.compile(r"(快|省时|时间短|用时|多久|faster|quicker|quickest)", re.I)

Row = Mapping[str, object]


def asked(text: str) -> str | None:
    """``"fastest"`` or ``"cheapest"`` when ``text`` compares flying with the train, else None."""
    if not (re.search(_FLY, text, re.I) and re.search(_RAIL, text, re.I) and re.search(_WHICH, text, re.I)):
        return None
    return "fastest" if FAST.search(text) else "cheapest"


def minutes(row: Row) -> int:
    """Door-to-door time of a flight or train row, in minutes."""
    dep_h, dep_m = as_str(row["dep_time"]).split(":")
    arr_h, arr_m = as_str(row["arr_time"]).split(":")
    return as_int(row.get("arr_days") or 0) * 1440 + int(arr_h) * 60 + int(arr_m) - int(dep_h) * 60 - int(dep_m)


def _measure(feature: str) -> Callable[[Row], int]:
    """What ``feature`` minimises: the travel time for ``"fastest"``, else the price."""
    return minutes if feature == "fastest" else (lambda r: as_int(r["price"]))


def _best(rows: Sequence[Row], feature: str) -> Row | None:
    return min(rows, key=_measure(feature)) if rows else None


def compare_line(rows: Mapping[str, Sequence[Row]], feature: str, lang: str) -> str:
    """One answer naming the best flight and the best train of ``rows`` (domain -> rows) and the winner."""
    zh = lang == "zh"
    names = {"flight": "飞机" if zh else "the flight", "train": "火车" if zh else "the train"}
    best = {d: _best(rows.get(d, ()), feature) for d in ("flight", "train")}
    parts = []
    for domain, row in best.items():
        if row is None:
            parts.append(f"{names[domain]}没有可订的" if zh else f"no {names[domain]} available")
            continue
        hours, mins = divmod(minutes(row), 60)
        took = (f"{hours}小时{mins:02d}分" if zh else f"{hours}h{mins:02d}") if hours else f"{mins}分钟"
        what = f"{R.code_of(row)} {row['seat_class']}{row.get('berth') or ''}"
        if zh:
            parts.append(
                f"{names[domain]}{'最快' if feature == 'fastest' else '最便宜'}是{what}，{row['price']}元，{took}"
            )
        else:
            parts.append(f"{feature} {names[domain]}: {what}, {row['price']} yuan, {took}")
    flight, train = best["flight"], best["train"]
    verdict = ""
    if flight is not None and train is not None:
        measure = _measure(feature)
        winner = "flight" if measure(flight) < measure(train) else "train" if measure(train) < measure(flight) else ""
        if winner:
            word = (
                ("更快" if feature == "fastest" else "更便宜")
                if zh
                else ("faster" if feature == "fastest" else "cheaper")
            )
            verdict = f"{names[winner]}{word}。" if zh else f" {names[winner].capitalize()} is {word}."
        else:
            verdict = "两者一样。" if zh else " Both are the same."
    return ("；".join(parts) + "。" + verdict) if zh else ("; ".join(parts) + "." + verdict)
