"""When a yes is a yes: a yes inside a question is none, a yes naming the action asked is a plain yes."""

from __future__ import annotations

import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.context import Act, Context
from ragdial.task.acts.finders import NEGATED_PERIOD
from ragdial.task.acts.text import _clauses, without_afterthought_marker
from ragdial.task.acts.words import ASKS, CONFIRM, CONFIRM_START, FILLER, NEGATED_REQUEST, OTHER_OPTION, RESERVATION


def rules_decide(text: str, context: Context, acts: list[Act]) -> bool:
    """Whether the rules' reading of ``text`` stands whatever a learned reader hears: turns of kinds the utterance
    banks hold no example of — another listed offer picked during a read-back (第二个), one of the alternatives
    offered when nothing matched picked (就9点35那趟), whether there really is none (一班都没有吗？), a window
    refused (下午不行), a train's code said while hotels are listed — and a choice with its yes said together
    (the yes is heard by the rules' word lists; the model would drop it and ask again)."""
    oq = context.open_question
    if oq in ("confirm_booking", "offer_alternative") and any(a.act == "select" for a in acts):
        return True
    names = [a.act for a in acts]
    if oq == "choose_offer" and any(names[i : i + 2] == ["select", "confirm"] for i in range(len(names) - 1)):
        return True  # 第二趟，行，顺便…: a choice and its yes, said together (a further request may follow)
    if not context.offers and "select" in names and ("inform" in names or "modify" in names):
        return True  # 明天的，挑最便宜的: a choice said before the options come (the banks have none)
    if any(a.slots.get("availability") or (a.slots.get("code") and a.act == "inform") for a in acts):
        return True  # (a train or flight code said while something else is under way: a request for it)
    plain = [FILLER.sub("", clause).strip() for clause, _q in _clauses(text)]
    if "deny" in names and any(NEGATED_REQUEST.fullmatch(c) for c in plain):
        return True  # 不订酒店了，我订了哪些: a request said negated is a no (the banks have none)
    return any(NEGATED_PERIOD.match(clause) for clause in plain)


def _asks(clause: str, marked: bool) -> bool:
    """Whether a clause is a question (a question mark after it, 吗/么 at its end, 好不好, 对吧, is that …)."""
    return marked or bool(ASKS.search(FILLER.sub("", clause).strip() or clause))


def no_yes_in_questions(acts: list[Act], text: str) -> list[Act]:
    """A question is never a confirmation (a yes books): in a turn holding a question, ``confirm`` stays only
    when some other clause says yes as a statement ("几点到？好，订吧"); otherwise it is dropped, and a turn left
    with nothing is a question about the offer as a whole, ``request{}`` ("确定吗？" / "对吧" / "is that
    right?"), answered by saying nothing is done yet and reading the offer back. Every reader's acts end here."""
    if not any(a.act == "confirm" for a in acts):
        return acts
    clauses = _clauses(text.strip())
    asking = [i for i, (c, q) in enumerate(clauses) if _asks(c, q) or OTHER_OPTION.search(c)]
    yes = [
        i
        for i, (clause, marked) in enumerate(clauses)
        if (body := FILLER.sub("", clause).strip())
        and not _asks(clause, marked)
        and (CONFIRM.fullmatch(body) or CONFIRM_START.match(body))
    ]
    reservation = bool(yes) and bool(RESERVATION.search(" ".join(c for c, _q in clauses[yes[0] + 1 :])))
    if not asking and not reservation:
        return acts
    if yes and not reservation and (not asking or max(asking) < max(yes)):
        return acts  # 几点到？好，订吧: the yes comes after the question
    if (
        yes
        and not reservation
        and {a.act for a in acts} <= {"confirm", "out_of_scope", "ask_about_booking"}
        and min(yes) < min(asking)
    ):
        return acts  # 好的，确认。厦门明天冷不冷？ / 确认。订单号是多少？: not a question about the offer
    # 好吧，不过有没有再便宜点的？ / 可以，不过这班是哪家航空的？: a yes followed by a question or a "but" is no yes
    return [a for a in acts if a.act != "confirm"] or [Act("request")]


# a yes that names the action asked about (确认改签 / 机票确定取消 / 那就退掉吧 / 好，订吧): that yes, said plainly
_ASKED_THING = r"(?:机票|火车票|高铁票|车票|票|酒店|房间|订单|单子|航班|火车|高铁)"
_ASKED_OBJECT = rf"(?:(?:这|那)?(?:一)?(?:张|个|单|间|班|趟)?{_ASKED_THING}?\s*\d*)"
_YES = r"(?:确认|确定|同意|好的|好|对|行|可以|没问题|是的|嗯)"
_NAMED_ACTION = {
    "book": r"(?:预订|预定|订票|订|下单|买)",
    "change": r"(?:改签|改期|改)",
    "cancel": r"(?:取消|退票|退订|退掉|退|撤销)",
}


def _named_yes(body: str, action: str) -> bool:
    """Whether ``body`` (a clause, fillers stripped) is a yes to the question asking to do ``action``: the action's
    verb with at most the thing it is done to and a yes word, 就/那就 or 吧 around it (火车票确定取消 / 那就改签吧);
    a cancellation or change asked about is also agreed to by its verb alone (取消这张票 / 改签)."""
    verb = _NAMED_ACTION[action]
    m = re.fullmatch(
        rf"{_ASKED_OBJECT}(?P<yes>{_YES})?[，,\s]*(?P<so>就这么|那就|就|这么|那)?(?P<ask>要|帮我|给我|请)?{verb}"
        rf"(?:一下)?{_ASKED_OBJECT}(?P<tail>[吧了啊呀的掉嘛上]*)",
        body,
    )
    return bool(
        m
        and (
            action != "book"
            or m.group("yes")
            or m.group("so")
            or m.group("ask")
            or re.search("[吧上]", m.group("tail"))
        )
    )


# a yes said again after it was not heard: 我是说确认 / 我说了订 / 都说了好的
SAID_AGAIN = re.compile(r"^(?:我是说|我说的是|我说了|我都说了|都说了|我说|说了)\s*")


def said_plainly(text: str, context: Context | JSONDict | None) -> str:
    """``text`` as the readers take it: without the 对了 opening an afterthought, and at a yes/no question with a
    clause that agrees by naming the action asked about (确认改签 at a change's read-back, 机票确认取消 at a
    cancellation's question) said as a plain 确认; 确认取消 at a booking's read-back is a plain 不了."""
    text = without_afterthought_marker(text)
    ctx = context if isinstance(context, Context) else Context.from_dict(context)
    asked = {"confirm_cancel": "cancel", "confirm_booking": "change" if ctx.state.get("rebooking") else "book"}
    action = asked.get(ctx.open_question or "")
    if not action or not text or ASKS.search(text):
        return text
    pieces = _clauses(text)
    if any(q for _c, q in pieces):
        return text
    out = []
    for clause, _q in pieces:
        body = FILLER.sub("", clause).strip() or clause
        again = SAID_AGAIN.sub("", body)
        if _named_yes(again, action) or (again != body and CONFIRM.fullmatch(again)):
            out.append("确认")
        elif action != "cancel" and re.fullmatch(rf"{_YES}[，,\s]*(?:就|那就)?取消(?:吧|了|啊|呀)*", body):
            out.append("不了")  # 确认取消 when asked to book: no
        else:
            out.append(clause)
    if out == [clause for clause, _q in pieces]:
        return text  # nothing said plainly: the turn as typed (a rejoin would glue English words: "andI")
    return "，".join(out)
