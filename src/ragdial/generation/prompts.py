"""Every prompt the LLM backends send, in Chinese and English, in one place.

A request becomes chat messages: a system instruction, then each in-context exemplar as a user message (its
knowledge and dialog) followed by an assistant message (its gold reply), then the request itself as the last user
message. Knowledge is listed one item a line; the instruction forbids changing or inventing knowledge values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragdial.generation.base import Exemplar, GenerationRequest
from ragdial.generation.knowledge_view import describe
from ragdial.schema import Knowledge, Speaker, Turn


@dataclass(frozen=True)
class PromptText:
    system: str
    knowledge: str
    no_knowledge: str
    examples: str
    user: str
    agent: str


PROMPTS = {
    "zh": PromptText(
        system=(
            "你是一个知识型对话助手。请根据【知识】用一两句自然、简短的中文回复用户的最后一句话。"
            "只使用【知识】里的信息：名称、数字、时间、价格等必须逐字照抄，不得改动、矛盾或编造知识中没有的内容。"
            "如果没有相关知识，就礼貌、简短地回应。只输出回复本身。"
        ),
        knowledge="【知识】",
        no_knowledge="（无）",
        examples="【参考回复示例】",
        user="用户",
        agent="助手",
    ),
    "en": PromptText(
        system=(
            "You are a helpful assistant in a task-oriented dialog. Reply to the user's last message in one or two "
            "short, natural sentences, grounded in the KNOWLEDGE below. Use only facts from the KNOWLEDGE; copy names, "
            "numbers, times and prices exactly; never contradict it or invent anything it does not say. If there is "
            "no relevant knowledge, answer briefly and politely. Output only the reply."
        ),
        knowledge="KNOWLEDGE:",
        no_knowledge="(none)",
        examples="EXAMPLE REPLIES:",
        user="User",
        agent="Assistant",
    ),
}


def prompt_text(language: str) -> PromptText:
    return PROMPTS["zh" if language == "zh" else "en"]


def render_knowledge(items: Sequence[Knowledge], language: str) -> str:
    text = prompt_text(language)
    # least relevant first: a small model leans on what is nearest the question, so the best item goes last
    lines = [f"- {describe(item)}" for item in reversed(items)] or [text.no_knowledge]
    return "\n".join([text.knowledge, *lines])


def render_exemplars(exemplars: Sequence[Exemplar], language: str) -> str:
    """Replies from similar training turns, shown in the system message as examples of style."""
    text = prompt_text(language)
    lines = []
    for exemplar in exemplars:
        question = next((t.text for t in reversed(exemplar.context) if t.speaker == Speaker.USER), "")
        lines.append(f"- {text.user}: {question} → {text.agent}: {exemplar.response}")
    return "\n".join([text.examples, *lines]) if lines else ""


def build_messages(
    request: GenerationRequest,
    context: Sequence[Turn] | None = None,
    knowledge: Sequence[Knowledge] | None = None,
    exemplars: Sequence[Exemplar] | None = None,
) -> list[dict[str, str]]:
    """Chat messages for ``request``; the optional arguments override its (possibly truncated) parts.

    The system message holds the instruction, the knowledge and any exemplars; the dialog follows as real user and
    assistant messages, so the model answers the last user message instead of continuing a transcript (a small
    model given the dialog as text tends to echo it).
    """
    language = request.language
    items = request.knowledge if knowledge is None else knowledge
    shots = request.exemplars if exemplars is None else exemplars
    parts = [
        prompt_text(language).system,
        request.instruction,
        render_knowledge(items, language),
        render_exemplars(shots, language),
    ]
    messages = [{"role": "system", "content": "\n\n".join(p for p in parts if p)}]
    turns = request.context if context is None else context
    for turn in turns:
        messages.append({"role": "user" if turn.speaker == Speaker.USER else "assistant", "content": turn.text})
    if len(messages) == 1 or messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": ""})
    return messages


PER_MESSAGE_TOKENS = 8  # role markers and separators the chat template adds to each message


def recent_turns(context: Sequence[Turn], keep: int) -> list[Turn]:
    """The last ``keep`` turns of ``context`` (all with ``keep`` 0), starting at a user turn: a cut that would open
    on a reply drops that reply too, so the model reads whole exchanges and the question."""
    if keep <= 0 or len(context) <= keep:
        return list(context)
    recent = list(context[-keep:])
    while len(recent) > 1 and recent[0].speaker != Speaker.USER:
        recent.pop(0)
    return recent


def fit_messages(
    request: GenerationRequest, count_tokens: Callable[[str], int], budget: int, turns: int = 0
) -> tuple[list[dict[str, str]], int]:
    """Messages for ``request`` within ``budget`` tokens, and their size; ``turns`` > 0 keeps only the last that
    many dialog turns (``recent_turns``) whatever the budget.

    What goes first when the prompt is too long: in-context exemplars (farthest first), then the oldest dialog turns
    (the last one stays), then the lowest-ranked knowledge items (the first stays), then the head of what is left
    of the last message. It never fails: at worst the last message is cut to its tail.
    """
    exemplars = list(request.exemplars)
    context = recent_turns(request.context, turns)
    knowledge = list(request.knowledge)

    def size(messages: list[dict[str, str]]) -> int:
        return sum(count_tokens(m["content"]) + PER_MESSAGE_TOKENS for m in messages)

    while True:
        messages = build_messages(request, context, knowledge, exemplars)
        total = size(messages)
        if total <= budget:
            return messages, total
        if exemplars:
            exemplars.pop()
        elif len(context) > 1:
            context.pop(0)
        elif len(knowledge) > 1:
            knowledge.pop()
        else:
            break
    if context:  # shorten the one remaining turn, keeping its end (the question) and the knowledge
        turn = context[-1]

        def with_tail(keep: int) -> list[dict[str, str]]:
            cut = Turn(turn.speaker, turn.text[len(turn.text) - keep :] if keep else "")
            return build_messages(request, [cut], knowledge, exemplars)

        keep = _longest(len(turn.text), lambda n: size(with_tail(n)) <= budget)
        messages = with_tail(keep)
        if keep or size(messages) <= budget:
            return messages, size(messages)
    head, last = messages[:-1], messages[-1]["content"]
    room = budget - size(head) - PER_MESSAGE_TOKENS
    if room < 0:  # even the instruction and one knowledge item do not fit: keep the head of the system message
        system = head[0]["content"]
        fit = budget - 2 * PER_MESSAGE_TOKENS
        keep = _longest(len(system), lambda n: count_tokens(system[:n]) <= fit)
        messages = [{"role": "system", "content": system[:keep]}, {"role": "user", "content": ""}]
        return messages, size(messages)
    keep = _longest(len(last), lambda n: count_tokens(last[len(last) - n :] if n else "") <= room)
    messages = [*head, {"role": "user", "content": last[len(last) - keep :] if keep else ""}]
    return messages, size(messages)


def _longest(limit: int, fits: Callable[[int], bool]) -> int:
    """The largest ``n`` in ``0..limit`` with ``fits(n)`` (``fits`` is monotone: true up to some n)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
