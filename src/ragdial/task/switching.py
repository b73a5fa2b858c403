"""Replacing a booked trip by the other mode of travel (飞机订好了 -> 算了，我还是坐高铁吧).

A turn that asks for a train after a flight was booked on that route (or a flight after a train), with a word of
replacing (还是 / 改坐 / 换成 …) or with a cancellation said in it, is one plan change: the booked trip's
cancellation is asked first, and the new request (all its clauses joined) waits for the answer; it is then
searched on the cancelled trip's route and date (``TaskBranch._cancel``). When the cancellation was only implied
(no cancel word said), a no keeps the booking and the new trip is still searched: the user asked for it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ragdial.jsontypes import JSONDict
from ragdial.task.acts import Act
from ragdial.task.orders import live_bookings

TRIPS = ("flight", "train")
# words of replacing one plan by another (not of adding a trip: 回来 / 返程 is another leg)
REPLACING = re.compile(
    r"(还是|改坐|改乘|改成|换成|改订|改买|换坐|换乘|改为|不坐飞机|不飞了|不坐火车|不坐高铁|不坐动车|坐.{0,4}算了|instead)",
    re.I,
)
ANOTHER_LEG = re.compile(r"(回来|返程|回程|往返|回去的|再从|然后从|接着从|return)", re.I)
ROUTE = ("dep_city", "arr_city", "date")


def replacing_trip(acts: Sequence[Act], text: str, bookings: Sequence[Mapping[str, object]]) -> list[Act]:
    """``acts`` with a replacement of a booked trip made explicit: the cancellation first, then one request for
    the new trip (its clauses joined); a 算了 opening the change is no "no". ``acts`` unchanged otherwise."""
    wanted = [a for a in acts if a.act in ("inform", "modify") and a.slots.get("domain") in TRIPS]
    if not wanted or ANOTHER_LEG.search(text):
        return list(acts)
    domain = wanted[-1].slots["domain"]
    live = [b for b in live_bookings(bookings) if b.get("domain") in TRIPS]
    replaced = [b for b in live if b.get("domain") != domain]
    said = [a for a in acts if a.act == "cancel_booking"]
    if said:
        named = said[0].slots
        if named.get("domain") not in (None, *TRIPS) or named.get("domain") == domain:
            return list(acts)
    elif len(replaced) != 1 or not REPLACING.search(text):
        return list(acts)
    else:
        booking = replaced[0]
        slots: JSONDict = {"domain": str(booking["domain"])}
        order = booking.get("order_no")
        if isinstance(order, int):
            slots["order_no"] = order
        slots["implied"] = True  # (not said: a no keeps the booking and still searches the new trip)
        said = [Act("cancel_booking", slots)]
    joined: JSONDict = {}
    trip = [a for a in acts if a.act in ("inform", "modify") and a.slots.get("domain") in (None, domain)]
    for act in trip:
        joined.update(act.slots)
    if said[0].slots.get("domain") is None and replaced:
        said[0].slots["domain"] = str(replaced[-1]["domain"])
    booked = next((b for b in replaced if b.get("domain") == said[0].slots.get("domain")), None)
    if booked is not None and any(joined.get(k) not in (None, booked.get(k)) for k in ROUTE):
        return list(acts)  # another route or day: a further trip, not the booked one replaced
    rest = [a for a in acts if a not in trip and a.act not in ("cancel_booking", "deny")]
    return [said[0], Act("inform", joined), *rest]
