"""The task dialog's state as kept in the session between turns (plain JSON), and the scratch of one turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, Required, TypedDict, cast

from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.task.acts import Act
from ragdial.task.orders import Booking, CancelQuestion, ChangeQuestion, Rebook

STATE_KEY = "task"  # where a dialog system keeps this branch's state in its session state
UNDER_WAY_KEYS = ("open", "pending", "offers", "suggestion")  # any set: the task dialog is under way
TRIP_KEYS = ("dep_city", "arr_city", "date", "period", "time_from", "time_to", "passengers")


class Pending(TypedDict, total=False):
    """The offer being read back: which item, from when, how many."""

    domain: Required[str]
    id: Required[int]
    date: str | None
    nights: int
    rooms: int
    passengers: int


class TaskState(TypedDict):
    """The task dialog's state, kept as JSON in the session between turns."""

    version: int
    language: str
    domain: str | None
    slots: JSONDict
    offers: list[int]
    open: str | None
    pending: Pending | None
    suggestion: JSONDict | None
    queue: list[JSONDict]
    bookings: list[Booking]
    failures: dict[str, int]
    cancel: CancelQuestion | None
    rebook: Rebook | None
    turns: int
    done: bool
    last_city_slot: NotRequired[str]
    alternative: NotRequired[str]
    change: NotRequired[ChangeQuestion | None]
    said_date: NotRequired[str]  # the day a calendar question asked about (那天 names it next)
    refused: NotRequired[list[int]]  # offers of the request under way refused at their read-back (never again)


class _Before(TypedDict):
    """What a relative preference (便宜点的) changes, kept to be put back when nothing is beyond the offers."""

    slots: JSONDict
    offers: list[int]
    open: str | None
    pending: Pending | None
    suggestion: JSONDict | None


def as_json(value: TaskState | Booking) -> JSONDict:
    """The state or a booking as the JSON it is (every field holds JSON), for the session and the reply."""
    return cast(JSONDict, value)


def _task_state(state: JSONObject) -> TaskState:
    """A session's task state as this branch wrote it (``respond`` starts afresh from any other version)."""
    return cast(TaskState, state)


def under_way(state: JSONObject | None) -> bool:
    """Whether ``state`` is a task dialog in progress (a question, offers, a read-back or a suggestion open)."""
    return state is not None and any(state.get(key) for key in UNDER_WAY_KEYS)


def new_state() -> TaskState:
    """The state of a dialog that has not started."""
    return {
        "version": 2,
        "language": "zh",
        "domain": None,
        "slots": {},
        "offers": [],
        "open": None,
        "pending": None,
        "suggestion": None,
        "queue": [],
        "bookings": [],
        "failures": {},
        "cancel": None,
        "rebook": None,
        "turns": 0,
        "done": False,
    }


@dataclass
class TaskTurn:
    """What one ``respond`` step returns: the reply, the new state and what happened."""

    reply: str
    state: JSONDict
    done: bool = False
    booked: JSONDict | None = None
    in_scope: bool = True
    acts: list[str] = field(default_factory=list)

    def __iter__(self):  # allows ``reply, state, info = branch.respond(...)``
        yield self.reply
        yield self.state
        yield {"done": self.done, "booked": self.booked, "in_scope": self.in_scope, "acts": self.acts}


class _Turn:
    """Scratch of one turn: reply parts, whether the search must run again, bookings made."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.dirty = False
        self.booked: list[Booking] = []
        self.prompted = False
        self.previous: Pending | None = None
        self.queued: JSONDict | None = None
        self.notes: list[str] = []
        self.relative: tuple[str, _Before] | None = None  # (kind, state before) of 便宜点的 / 早一点的
        self.deferred: Act | None = (
            None  # a choice said after a change (不限时间，要最便宜的): made among the new offers
        )
        self.text = ""  # what the user said (an out-of-scope date question is answered from it)
        self.unresolved = False  # a yes said while choosing, with no offer chosen: a further request waits
        self.cancel_asked = False  # a cancellation was asked about this turn (a request said with it waits)
        self.chosen = False  # an offer was chosen this turn (a constraint said again with it changes nothing)
        self.answered = False  # a question was answered this turn (a remark next to it needs no refusal)
        self.reclassed = False  # a class or berth said during a read-back (the same train in it is read back)
        self.compare: str | None = None  # 飞机和火车哪个便宜: the feature the two ways to travel are compared by
        self.booked_facts: JSONDict = {}  # what the booking made this turn is (a constraint said again with its yes)
        self.chosen_then_changed = False  # an offer chosen and changed in one turn (read back once, no "changed")
        self.understood_change = False  # a change of the offer read back was heard (a value or a domain said)
        self.started: str | None = None  # the kind of request started this turn (a further kind said waits)
