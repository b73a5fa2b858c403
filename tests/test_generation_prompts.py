"""Prompts: instruction, knowledge and exemplars in the system message, the dialog as chat turns; truncation order;
never failing on an over-long context."""

from __future__ import annotations

from ragdial.datasets import kdconv
from ragdial.generation.base import Exemplar, GenerationRequest
from ragdial.generation.prompts import build_messages, fit_messages, recent_turns
from ragdial.schema import Speaker, Turn


def chars(text: str) -> int:
    return len(text)


def dialog(n: int) -> list[Turn]:
    return [Turn(Speaker.USER if i % 2 == 0 else Speaker.SYSTEM, f"第{i}句话。" * 5) for i in range(n)]


def test_messages_carry_instruction_knowledge_exemplars_and_dialog():
    item = kdconv.triple("云松山", "门票", "成人票45元")
    shot = Exemplar([Turn(Speaker.USER, "白鹭岛门票多少？")], [kdconv.triple("白鹭岛", "门票", "20元")], "20元。")
    context = [Turn(Speaker.USER, "你好"), Turn(Speaker.SYSTEM, "你好！"), Turn(Speaker.USER, "云松山门票多少钱？")]
    messages = build_messages(GenerationRequest(context, [item], exemplars=[shot]))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0]["content"]
    assert "逐字照抄" in system and "云松山 | 门票 | 成人票45元" in system
    assert "用户: 白鹭岛门票多少？ → 助手: 20元。" in system
    assert messages[-1]["content"] == "云松山门票多少钱？"
    english = build_messages(GenerationRequest([Turn(Speaker.USER, "Hi")], language="en"))
    assert "KNOWLEDGE:\n(none)" in english[0]["content"] and "never contradict" in english[0]["content"]
    assert english[-1] == {"role": "user", "content": "Hi"}


def test_fit_drops_exemplars_before_dialog_turns():
    shot = Exemplar(dialog(2), [], "好的。")
    request = GenerationRequest(dialog(6), exemplars=[shot, shot])
    full = sum(len(m["content"]) + 8 for m in build_messages(request))
    messages, size = fit_messages(request, chars, full - 1)
    assert size <= full - 1
    assert messages[0]["content"].count("好的。") == 1  # one exemplar went
    assert len(messages) == 1 + 6 + 1  # all six turns stay (the last is the assistant's: an empty user cue follows)
    assert "第0句话" in messages[1]["content"]


def test_fit_truncates_from_the_oldest_turn_and_keeps_the_last():
    request = GenerationRequest(dialog(199), [kdconv.triple("云松山", "门票", "45元")])
    messages, size = fit_messages(request, chars, 600)
    assert size <= 600
    text = "".join(m["content"] for m in messages)
    assert "第198句话" in messages[-1]["content"] and "第0句话" not in text and "45元" in messages[0]["content"]


def test_fit_never_fails_on_one_huge_turn():
    request = GenerationRequest([Turn(Speaker.USER, "很长的问题" * 2000 + "最后一句")])
    messages, size = fit_messages(request, chars, 400)
    assert size <= 400
    assert messages[-1]["content"].endswith("最后一句")


def test_fit_shortens_a_huge_last_turn_but_keeps_the_knowledge():
    item = kdconv.triple("云松山", "门票", "成人票45元")
    request = GenerationRequest([Turn(Speaker.USER, "很长的问题" * 2000 + "门票多少钱？")], [item])
    messages, size = fit_messages(request, chars, 400)
    assert size <= 400
    assert "成人票45元" in messages[0]["content"] and messages[-1]["content"].endswith("门票多少钱？")


def test_fit_with_a_budget_too_small_for_anything_returns_an_empty_last_message():
    messages, size = fit_messages(GenerationRequest(dialog(3)), chars, 30)
    assert size <= 30
    assert messages[-1]["content"] == ""


def test_prompt_turns_keep_the_last_exchanges_and_open_on_a_user_turn():
    context = dialog(7)  # user, reply, ..., user (turn 6 is the question)
    assert recent_turns(context, 0) == context and recent_turns(context, 9) == context
    assert [t.text[:4] for t in recent_turns(context, 3)] == ["第4句话", "第5句话", "第6句话"]
    assert [t.text[:4] for t in recent_turns(context, 2)] == ["第6句话"]  # a cut opening on a reply drops it
    assert [t.text[:4] for t in recent_turns(context, 1)] == ["第6句话"]
    item = kdconv.triple("云松山", "门票", "45元")
    messages, _ = fit_messages(GenerationRequest(context, [item]), chars, 10_000, turns=3)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "第4句话" in messages[1]["content"] and "第3句话" not in "".join(m["content"] for m in messages)
    assert "45元" in messages[0]["content"] and messages[-1]["content"].startswith("第6句话")
    everything, _ = fit_messages(GenerationRequest(context, [item]), chars, 10_000)
    assert len(everything) == 1 + 7
