"""When nothing meets a request: which condition cannot be met (each alone, or only not all together), a full
hotel or a sold-out train said as such (or how many are left), and the nearest alternative offered (kept in the
state until the user takes it). Also the search constraints a request's slots stand for (a time of day as its
window, the tickets as the seats needed, a total budget per ticket or room-night).

``NoMatch`` is mixed into ``TaskBranch`` (``ragdial.task.manager``), which supplies the database and the day."""

from __future__ import annotations

import datetime as dt

from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.task import limits
from ragdial.task import replies as R
from ragdial.task.acts import WINDOWS
from ragdial.task.db import Row, TravelDB
from ragdial.task.state import TRIP_KEYS, TaskState, _Turn
from ragdial.task.values import as_int, as_str, items, text_or_none

SHOWN = 3  # offers listed at a time


def _price_text(value: int, lang: str) -> str:
    return f"{value}元以内" if lang == "zh" else f"up to {value} yuan"


class NoMatch:
    """The search constraints of a request, and the reply when none meets them (mixed into ``TaskBranch``)."""

    db: TravelDB
    today: dt.date

    def _constraints(self, domain: str, slots: JSONObject) -> JSONDict:
        c = dict(slots)
        period = text_or_none(c.pop("period", None))
        if period in WINDOWS and not (c.get("time_from") or c.get("time_to")):
            c["time_from"], c["time_to"] = WINDOWS[period]
        if c.get("time_to") == "24:00":
            c["time_to"] = "24:01"
        if domain != "hotel":
            c["min_seats"] = as_int(c.get("passengers") or 1)
        return limits.per_unit(domain, c)

    def _no_result(self, state: TaskState, constraints: JSONDict, turn: _Turn) -> None:
        """Say which constraint cannot be met and offer the nearest alternative (kept until accepted)."""
        lang, domain, slots = state["language"], state["domain"], state["slots"]
        assert domain is not None  # after a search
        zh = lang == "zh"
        key = repr(sorted((k, str(v)) for k, v in constraints.items() if v))
        seen = state["failures"].get(key, 0)
        state["failures"][key] = seen + 1
        name = R.DOMAIN_NAMES[lang][domain]
        base_keys = ("city", "date") if domain == "hotel" else ("dep_city", "arr_city", "date")
        base = {k: constraints[k] for k in base_keys if constraints.get(k)}
        not_conditions = ("check_out", "guests", "passengers", "city", "dep_city", "arr_city", "date")
        optional = [k for k in slots if k not in base_keys and k not in not_conditions]
        optional = [k for k in optional if slots.get(k) not in (None, "", [])]
        if domain != "hotel":
            base["min_seats"] = constraints.get("min_seats", 1)
        blocking: list[str] = []
        relaxed_rows: list[Row] = []
        suggestion: JSONDict | None = None
        if self.db.search(domain, {k: v for k, v in base.items() if k != "date"}, limit=1) == []:
            where = slots.get("city") if domain == "hotel" else f"{slots['dep_city']}到{slots['arr_city']}"
            head = f"抱歉，没有{where}的{name}。" if zh else f"Sorry, there are no {name} for {where}."
        elif not self.db.search(domain, self._constraints(domain, base), limit=1):
            head = (
                f"抱歉，{R.date_text(as_str(slots['date']), lang)}没有可订的{name}。"
                if zh
                else f"Sorry, no {name} can be booked on {slots['date']}."
            )
            blocking.append("date")
        else:
            counts: JSONDict = {c: slots[c] for c in ("passengers", "rooms", "nights") if c in slots}
            for k in optional:
                alone = self._constraints(domain, {**base, **{k: slots[k]}, **(counts if k == "max_total" else {})})
                if not self.db.search(domain, {**alone, **{x: base[x] for x in base}}, limit=1):
                    blocking.append(k)
            together = not blocking  # each is possible alone, not all together
            blocking = blocking or list(optional)
            if together:  # one night, one room, one ticket is no condition worth naming
                blocking = [
                    k
                    for k in blocking
                    if not (k in ("nights", "rooms", "passengers") and as_int(slots.get(k) or 1) == 1)
                ] or blocking
            names = "、".join(dict.fromkeys(self._named(k, slots, domain, lang) for k in blocking))
            full = self._sold_out(domain, constraints)
            if full:  # the hotel or train asked for is there, only full (not "no such hotel")
                head = self._sold_out_text(domain, full, slots, lang)
            elif together:
                head = (
                    f"抱歉，没有同时满足{names}这几个条件的{name}（每个条件单独都能满足）。"
                    if zh
                    else f"Sorry, no {name} meet all of these together ({names}), though each alone can be met."
                )
            else:
                head = (
                    f"抱歉，没有找到满足全部条件的{name}，不能满足的是：{names}。"
                    if zh
                    else f"Sorry, no {name} match all your conditions; the one that cannot be met: {names}."
                )
            for drop in blocking + [k for k in optional if k not in blocking]:
                keys = (
                    {drop, "time_from", "time_to", "period"} if drop in ("period", "time_from", "time_to") else {drop}
                )
                if drop == "seat_class":
                    keys.add("berth")
                if drop in ("stars", "min_stars"):
                    keys |= {"stars", "min_stars"}
                relaxed = {k: v for k, v in slots.items() if k not in keys}
                rows = self.db.search(domain, self._constraints(domain, relaxed), limit=500)
                rows = limits.nearest(drop, rows)[:SHOWN]
                if rows:
                    relaxed_rows = rows
                    moved = limits.relaxed_value(drop, domain, rows[0], slots)
                    suggestion = moved if moved is not None else {k: None for k in keys if k in slots}
                    break
        notes: list[str] = []
        if relaxed_rows and suggestion is not None:
            changed = "、".join(dict.fromkeys(R.SLOT_NAMES[lang].get(k, k) for k in suggestion))
            budget = suggestion.get("max_price") or suggestion.get("max_total")
            if budget:
                head_word = "预算" if "max_price" in suggestion else "总预算"
                notes.append(
                    f"{head_word}放宽到{budget}元的话有可订的"
                    if zh
                    else f"with a {R.SLOT_NAMES[lang][next(iter(suggestion))]} of {budget} yuan there are options"
                )
            else:
                notes.append(
                    f"不限{changed}的话有可订的" if zh else f"without the {changed} condition there are options"
                )
        if not relaxed_rows and slots.get("date"):
            for shift in (1, -1, 2):
                day = dt.date.fromisoformat(as_str(slots["date"])) + dt.timedelta(days=shift)
                if day < self.today:
                    continue
                rows = self.db.search(domain, self._constraints(domain, {**slots, "date": day.isoformat()}), SHOWN)
                if rows:
                    relaxed_rows, suggestion = rows, {"date": day.isoformat()}
                    notes.append(f"{R.date_text(day.isoformat(), lang)}有可订的" if zh else f"on {day} there are")
                    break
        other = {"flight": "train", "train": "flight"}.get(domain)
        if other and not relaxed_rows:
            trip = {k: v for k, v in slots.items() if k in TRIP_KEYS}
            rows = self.db.search(other, self._constraints(other, trip), limit=1)
            if rows:
                suggestion = {"domain": other}
                means = "飞机" if other == "flight" else "火车"
                notes.append(
                    f"改坐{means}的话有，最低{rows[0]['price']}元，需要帮您查吗"
                    if zh
                    else f"by {other} there are options from {rows[0]['price']} yuan; shall I look?"
                )
        tail = ""
        if notes:
            ask = "" if suggestion and "domain" in suggestion else ("，要按这个来吗" if zh else "; shall I use that?")
            tail = "；".join(notes) + ask + ("？" if zh else "")
        else:
            tail = (
                "这个条件下确实没有可订的，请您换个日期或目的地试试。"
                if zh
                else "Nothing can be booked under these conditions; please try another date or destination."
            )
        if not zh:  # a sentence of its own after the head's full stop
            tail = tail[:1].upper() + tail[1:]
        if seen:
            tail = ("这些条件我已经查过了，确实没有。" if zh else "I have checked these conditions already. ") + tail
        msg = head + tail if zh else f"{head} {tail}"
        state["pending"] = None
        if relaxed_rows:
            state["offers"] = [row["id"] for row in relaxed_rows]
            msg += ("\n可选的有：\n" if zh else "\nAlternatives:\n") + R.listing(domain, relaxed_rows, lang)
        else:
            state["offers"] = []
        state["suggestion"] = suggestion
        state["open"] = "offer_alternative" if suggestion else "change"
        state["alternative"] = msg
        turn.parts.append(msg)

    def _sold_out(self, domain: str, constraints: JSONDict) -> list[Row]:
        """The rows meeting every condition but free rooms or seats (a full hotel, a sold-out train), within the
        days the database sells."""
        if domain == "hotel":
            days = self.db.dates()
            if not constraints.get("date") or as_str(constraints["date"]) not in days:
                return []
            named = {k: v for k, v in constraints.items() if k not in ("date", "nights", "rooms")}
            return self.db.search(domain, named, limit=3)
        code = text_or_none(constraints.get("code"))
        rows = self.db.search(domain, {**constraints, "min_seats": 0}, limit=1000 if code else 3)
        return [r for r in rows if R.code_of(r).upper() == code.upper()][:3] if code else rows

    def _sold_out_text(self, domain: str, rows: list[Row], slots: JSONObject, lang: str) -> str:
        """抱歉，维也纳酒店(上海徐汇店)12月7日已经订满了。 (and another day it has room, when there is one)"""
        zh = lang == "zh"
        names = "、".join(dict.fromkeys(as_str(r["name"]) if domain == "hotel" else R.code_of(r) for r in rows))
        day = as_str(slots["date"])
        if domain == "hotel":
            nights, rooms = as_int(slots.get("nights") or 1), as_int(slots.get("rooms") or 1)
            stay = (
                "在"
                + R.date_text(day, lang)
                + (f"起住{nights}晚" if nights > 1 else "")
                + (f"、{rooms}间" if rooms > 1 else "")
            )
            text = f"抱歉，{names}{stay}已经订满了，没有空房。" if zh else f"Sorry, {names} is fully booked then."
            free = {as_str(r["name"]): self._rooms_left(as_int(r["id"]), day, nights) for r in rows}
            short = {name: n for name, n in free.items() if 0 < n < rooms}
            if short:  # 1 room left for 2: say how many are left, never "full"
                when = f"{R.date_text(day, lang)}起住{nights}晚，" if zh else f"for {nights} night(s) from {day},"
                text = R.only_left(when, short, rooms, "间", lang)
        else:
            needed = as_int(slots.get("passengers") or 1)
            short = {R.code_of(r): as_int(r.get("seats") or 0) for r in rows if as_int(r.get("seats") or 0) > 0}
            if short and needed > 1:  # 2 seats left for 3: say how many are left, never "sold out"
                when = f"{R.date_text(day, lang)}符合条件的" if zh else f"on {day}"
                text = R.only_left(when, short, needed, "张", lang)
            else:
                text = (
                    f"抱歉，符合条件的{names}在{R.date_text(day, lang)}已经售完了。"
                    if zh
                    else f"Sorry, {names} is sold out on {day}."
                )
        for shift in (1, -1, 2):
            other = dt.date.fromisoformat(day) + dt.timedelta(days=shift)
            if other < self.today:
                continue
            if self.db.search(domain, self._constraints(domain, {**slots, "date": other.isoformat()}), limit=1):
                text += (
                    f"{R.date_text(other.isoformat(), lang)}还有，想改日期的话告诉我。"
                    if zh
                    else f" On {other} there is room, if you can change the date."
                )
                break
        return text

    def _rooms_left(self, hotel_id: int, day: str, nights: int) -> int:
        """The rooms a hotel has free on every night of a stay."""
        end = (dt.date.fromisoformat(day) + dt.timedelta(days=nights)).isoformat()
        with self.db.lock:
            row = self.db.conn.execute(
                "SELECT MIN(rooms), COUNT(*) FROM hotel_rooms WHERE hotel_id = ? AND date >= ? AND date < ?",
                (hotel_id, day, end),
            ).fetchone()
        return int(row[0] or 0) if row and row[1] == nights else 0

    @staticmethod
    def _named(key: str, slots: JSONObject, domain: str, lang: str) -> str:
        """A constraint's name with the value asked for (出发时段（上午）), so the user sees what was searched."""
        name = R.SLOT_NAMES[lang].get(key, key)
        if key in limits.LIMIT_KEYS:
            value = limits.named(key, slots, domain, lang)
        elif key in ("time_from", "time_to"):
            value = f"{slots.get('time_from') or ''}–{slots.get('time_to') or ''}"
        elif key == "max_price":
            value = _price_text(as_int(slots[key]), lang)
        elif key in ("stars", "min_stars"):
            value = f"{slots[key]}星" + ("及以上" if key == "min_stars" else "") if lang == "zh" else f"{slots[key]}*"
        elif key == "train_kinds":
            value = "/".join({"G": "高铁", "D": "动车"}.get(str(k), str(k)) for k in items(slots[key]))
        elif key in ("nights", "rooms"):
            value = str(slots[key])
        else:
            said = slots[key]
            value = "或".join(map(str, said)) if isinstance(said, list) else str(said)
        return f"{name}（{value}）" if lang == "zh" else f"{name} ({value})"
