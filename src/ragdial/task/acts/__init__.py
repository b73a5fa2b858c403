"""Dialog acts before slots: what a user turn does (inform, request, confirm, deny, select, modify,
ask_about_booking, out_of_scope, greeting, thanks), in the order it is said, each with its normalised slots.

``understand(text, context, gazetteer, today)`` reads one user turn in the context the system left it in
(``Context``: the task under way, the open question, the offers listed, the known slots, the bookings made, a
suggestion). The slot conventions are those of ``benchmarks/data/README_task_utterances.md`` (ISO dates, named
time windows, canonical cities and places, class synonyms, reference slots for choosing an offer), so the
locked utterance bank scores this module directly (``benchmarks/task_nlu.py``).

An utterance is cut into clauses (punctuation, spaces between Chinese words, connectives such as 然后/顺便/对了);
each clause gets one act from cue words checked in a fixed order (greeting, thanks, booking question, out of
scope, attribute question, deny, confirm, choice of an offer, constraints); neighbouring clauses with the same act
are joined. Out-of-scope clauses never carry slots, whatever cities, dates or numbers they name.

The package has one module per job: ``words`` (cue words and patterns), ``context`` (the act and context
records), ``text`` (normalising and cutting into clauses), ``finders`` (one slot kind each), ``yes`` (when a yes
is one), ``aside`` (asides and travel words), ``booked`` (cancel / change slots), ``choice`` (choosing an offer),
``constraints`` (inform / modify / request slots), ``classify`` (one clause, one act), ``post`` (joining and
dropping acts) and ``reader`` (``understand``, ``slots_for``).
"""

from ragdial.task.acts.aside import ASIDE, ASIDE_FORM
from ragdial.task.acts.constraints import same_value
from ragdial.task.acts.context import Act, Context
from ragdial.task.acts.reader import Understander, slots_for, understand
from ragdial.task.acts.text import without_afterthought_marker
from ragdial.task.acts.words import ACTS, OOS, SERVICE_TOPICS, WINDOWS
from ragdial.task.acts.yes import no_yes_in_questions, rules_decide, said_plainly

__all__ = [
    "ACTS",
    "ASIDE",
    "ASIDE_FORM",
    "OOS",
    "SERVICE_TOPICS",
    "WINDOWS",
    "Act",
    "Context",
    "Understander",
    "no_yes_in_questions",
    "rules_decide",
    "said_plainly",
    "same_value",
    "slots_for",
    "understand",
    "without_afterthought_marker",
]
