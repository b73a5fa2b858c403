"""The llama.cpp backend on the packaged offline GGUF: short deterministic replies, streaming, limits, cancel."""

from __future__ import annotations

import threading

import pytest

from ragdial.datasets import kdconv
from ragdial.generation.base import GenerationRequest
from ragdial.generation.model_files import ModelFileError, packaged_parts
from ragdial.schema import Speaker, Turn

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the llm extra)")


@pytest.fixture(scope="module")
def generator():
    from ragdial.generation.llama import LlamaCppGenerator

    try:
        packaged_parts()
    except ModelFileError as err:
        pytest.skip(str(err))
    # plain llama-cpp-python, the reference of the decoder tests; every dialog turn shown, so a long dialog is cut by
    # the context window
    llm = LlamaCppGenerator(n_ctx=512, prefix_cache=0, prompt_turns=0)
    llm.warm_up()
    assert llm._decoder is None
    yield llm
    llm.close()


def ticket_request(max_tokens: int = 8) -> GenerationRequest:
    item = kdconv.triple("云松山", "门票", "成人票45元")
    return GenerationRequest([Turn(Speaker.USER, "云松山的门票多少钱？")], [item], max_tokens=max_tokens)


def english_ticket_request() -> GenerationRequest:
    """The same question in English (another prompt head than ``ticket_request``'s)."""
    item = kdconv.triple("Cloud Pine Mountain", "ticket", "adults 45 yuan")
    return GenerationRequest([Turn(Speaker.USER, "How much is the ticket?")], [item], language="en", max_tokens=12)


def test_short_deterministic_grounded_reply(generator):
    first = generator.generate(ticket_request())
    assert "45" in first
    assert generator.generate(ticket_request()) == first


def test_streams_pieces_within_max_tokens(generator):
    pieces = list(generator.stream(ticket_request(max_tokens=3)))
    assert 1 < len(pieces) <= 3
    assert generator.count_tokens("".join(pieces)) <= 3


def test_over_long_context_is_truncated_not_fatal(generator):
    turns = [
        Turn(Speaker.USER if i % 2 == 0 else Speaker.SYSTEM, f"这是第{i}轮很长的闲聊内容。" * 4) for i in range(120)
    ]
    turns.append(Turn(Speaker.USER, "云松山的门票多少钱？"))
    request = ticket_request(max_tokens=4)
    request.context = turns
    messages, max_tokens = generator.fit(request)
    prompt = messages[-1]["content"]
    assert "第0轮" not in prompt and "云松山的门票多少钱？" in prompt
    assert sum(generator.count_tokens(m["content"]) for m in messages) + max_tokens < generator.n_ctx
    assert generator.generate(request)  # runs


def test_cancellation_stops_the_stream(generator):
    request = ticket_request(max_tokens=20)
    request.cancel = threading.Event()
    stream = generator.stream(request)
    next(stream)
    request.cancel.set()
    assert list(stream) == []


def test_usage_counts_the_whole_prompt_the_model_evaluated(generator):
    request = ticket_request(max_tokens=4)
    pieces = list(generator.stream(request))
    messages, max_tokens = generator.fit(ticket_request(max_tokens=4))
    whole = generator.llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.0)
    assert request.usage["prompt_tokens"] == whole["usage"]["prompt_tokens"]  # llama.cpp's own count
    assert request.usage["prompt_tokens"] > generator.count_tokens("云松山的门票多少钱？") + 5  # not the user's words
    assert request.usage["completion_tokens"] == len(pieces)


def test_prompt_lookup_decoding_gives_the_plain_reply_on_a_long_prompt(generator):
    """With a draft model llama-cpp-python keeps every position's logits; a prompt longer than n_batch must not
    overflow that buffer (logits_all is set), and greedy prompt-lookup decoding gives the plain greedy reply."""
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, n_batch=64, prompt_lookup=4)
    try:
        request = ticket_request(max_tokens=12)
        request.context = [Turn(Speaker.USER, "我们下个月想去云松山玩两天，" * 12), *request.context]
        assert generator.count_tokens(request.context[0].text) > 64  # longer than the batch
        assert fast.generate(request) == generator.generate(request)
        assert fast.to_config()["prompt_lookup"] == 4
    finally:
        fast.close()


def test_lookup_decoder_reuses_the_cached_prefix_and_keeps_the_greedy_reply(generator):
    """The prompt-lookup decoder drafts from the knowledge (some drafts accepted), evaluates only the part of a prompt
    after the prefix its cache shares with the previous prompt, and gives the plain greedy reply every time."""
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, prompt_lookup=8)
    try:
        request = ticket_request(max_tokens=24)
        plain = generator.generate(ticket_request(max_tokens=24))
        assert fast.generate(request) == plain
        stats = fast._decoder.stats
        assert stats.generated == request.usage["completion_tokens"] > 1
        assert stats.drafted > 0 and 0 < stats.accepted <= stats.drafted
        assert fast.generate(ticket_request(max_tokens=24)) == plain  # same prompt again: all but one token reused
        assert fast._decoder.stats.reused_tokens == fast._decoder.stats.prompt_tokens - 1
        other = ticket_request(max_tokens=24)
        other.context = [Turn(Speaker.USER, "那学生票呢？")]
        assert fast.generate(other) == generator.generate(other)
        assert 0 < fast._decoder.stats.reused_tokens < fast._decoder.stats.prompt_tokens - 3
    finally:
        fast.close()


def test_lookup_decoder_stops_before_a_stop_string(generator):
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, prompt_lookup=8)
    try:
        plain = generator.generate(ticket_request(max_tokens=24))
        assert "45" in plain
        request = ticket_request(max_tokens=24)
        request.stop = ["45"]
        assert fast.generate(request) == plain[: plain.index("45")]
    finally:
        fast.close()


def test_a_prompt_head_is_restored_from_its_snapshot_after_the_other_language_used_the_cache(generator):
    """The decoder keeps the cache after the prompt's head (the system instruction, before the knowledge): a Chinese
    turn after an English one restores it instead of evaluating it again, and the reply stays plain greedy's."""
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, head_dir=None, turn_cache=0)  # heads only (no drafts), in memory only
    english = english_ticket_request()
    try:
        first = fast.generate(ticket_request(max_tokens=12))
        assert fast._decoder.stats.restored_tokens == 0 and len(fast._decoder.snapshots) == 1
        fast.generate(english)
        assert fast._decoder.stats.restored_tokens == 0 and len(fast._decoder.snapshots) == 2
        again = fast.generate(ticket_request(max_tokens=12))
        stats = fast._decoder.stats
        head = len(next(reversed(fast._decoder.snapshots)))  # the one just used
        assert stats.restored_tokens == stats.reused_tokens == head > 40  # the whole system instruction
        assert stats.prompt_tokens - head < stats.prompt_tokens / 2
        assert again == first == generator.generate(ticket_request(max_tokens=12))
        assert fast.to_config()["prefix_cache"] > 0
    finally:
        fast.close()


def test_priming_keeps_the_head_so_the_first_turn_evaluates_only_its_knowledge_and_dialog(generator):
    """``prime`` (the service's warm-up) runs one token of a request with the turn's instruction and no knowledge:
    the first real turn after it restores or reuses that head, and its reply is plain greedy decoding's."""
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, head_dir=None)
    guidance = "只回答用户问的那一项。"
    try:
        fast.prime(GenerationRequest([Turn(Speaker.USER, "你好")], language="zh", instruction=guidance))
        assert len(fast._decoder.snapshots) == 1 and fast._decoder.stats.generated == 1
        (head,) = fast._decoder.snapshots
        request = ticket_request(max_tokens=12)
        request.instruction = guidance
        reply = fast.generate(request)
        stats = fast._decoder.stats
        assert stats.reused_tokens >= len(head) > 40 and stats.prompt_tokens - stats.reused_tokens < len(head)
        plain = ticket_request(max_tokens=12)
        plain.instruction = guidance
        assert reply == generator.generate(plain)
    finally:
        fast.close()


def test_the_thread_count_follows_the_machines_load_unless_it_is_fixed(monkeypatch):
    """Without a fixed count each generation takes 2 threads, or 1 while the load average exceeds the cores + 1
    (llama.cpp's threads wait for each other, which on an oversubscribed machine costs far more than they add)."""
    from llama_cpp import llama_n_threads

    import ragdial.generation.llama as llama_module
    from ragdial.generation.llama import THREADS_ENV, LlamaCppGenerator, threads_for_load

    assert [threads_for_load(load, 2) for load in (0.2, 2.9, 3.0, 9.5)] == [2, 2, 1, 1]
    assert threads_for_load(0.0, 1) == 1 and threads_for_load(0.0, 8) == 2 and threads_for_load(0.0, 8, most=4) == 4
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr(llama_module.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(llama_module, "_load_average", lambda: 9.5)
    auto = LlamaCppGenerator(n_ctx=512, prefix_cache=0)
    try:
        assert auto.auto_threads and auto.to_config()["n_threads"] is None
        busy = auto.generate(ticket_request(max_tokens=6))
        assert llama_n_threads(auto.llm._ctx.ctx) == auto.n_threads == 1
        monkeypatch.setattr(llama_module, "_load_average", lambda: 0.5)
        assert auto.generate(ticket_request(max_tokens=6)) == busy  # the reply does not depend on the count
        assert llama_n_threads(auto.llm._ctx.ctx) == auto.n_threads == 2
    finally:
        auto.close()
    fixed = LlamaCppGenerator(n_threads=2)
    assert not fixed.auto_threads and fixed.to_config()["n_threads"] == 2


def test_saved_prompt_heads_are_read_back_by_the_next_start(generator, tmp_path):
    """With ``head_dir`` the head snapshots outlive the process: a new generator (a restarted service) restores the
    head on its first turn instead of evaluating it, and still gives plain greedy decoding's reply; a file that is
    not a saved head is removed, not trusted."""
    from ragdial.generation.llama import LlamaCppGenerator

    first = LlamaCppGenerator(n_ctx=512, head_dir=tmp_path)
    try:
        reply = first.generate(ticket_request(max_tokens=12))
        (head,) = first._decoder.snapshots
        assert first._decoder.stats.restored_tokens == 0
    finally:
        first.close()
    (store,) = tmp_path.iterdir()  # one folder per model file, llama.cpp build and context shape
    assert len(list(store.glob("*.head"))) == 1
    (store / "junk.head").write_bytes(b"not a head")
    second = LlamaCppGenerator(n_ctx=512, head_dir=tmp_path)
    try:
        again = second.generate(ticket_request(max_tokens=12))
        stats = second._decoder.stats
        assert stats.restored_tokens == stats.reused_tokens == len(head) > 40
        assert again == reply == generator.generate(ticket_request(max_tokens=12))
        assert not (store / "junk.head").exists() and second.to_config()["head_dir"] == str(tmp_path)
    finally:
        second.close()


def test_building_checks_the_model_and_warm_up_loads_it(tmp_path):
    """The registry checks the model file when it builds the generator (so ``auto`` can move on) but leaves the
    load to warm-up, which a service runs beside the encoders' loading."""
    from ragdial.errors import RagdialError
    from ragdial.generation.registry import create

    built = create("llama", n_ctx=256)
    try:
        assert built._llm is None and built.model_path is not None and built.model_path.is_file()
        built.warm_up()
        assert built._llm is not None
    finally:
        built.close()
    with pytest.raises(RagdialError, match=r"none\.gguf is missing"):
        create("llama", model=str(tmp_path / "none.gguf"))


def test_the_head_store_keeps_no_more_files_than_heads_kept_in_memory(tmp_path):
    """A retry's instruction names the unsupported claims, so every retry has a head of its own: the store drops
    the least recently used files beyond ``prefix_cache``, as the memory does."""
    from ragdial.generation.llama import LlamaCppGenerator

    fast = LlamaCppGenerator(n_ctx=512, prefix_cache=2, head_dir=tmp_path)
    try:
        for claim in ("88元", "99元", "12元"):
            request = ticket_request(max_tokens=2)
            request.instruction = f"上一个回复包含【知识】中没有的内容（{claim}）。"
            fast.generate(request)
        (store,) = tmp_path.iterdir()
        assert len(fast._decoder.snapshots) == len(list(store.glob("*.head"))) == 2
        assert fast._decoder._head_file(next(iter(fast._decoder.snapshots))).exists()  # the kept ones, not others
    finally:
        fast.close()


def test_two_threads_warming_one_generator_load_the_model_once(monkeypatch):
    """A service starts the GGUF load in its warm-up thread while a turn may ask for the model: the second caller
    waits for the first load instead of loading the file again."""
    import time

    import llama_cpp

    from ragdial.generation.llama import LlamaCppGenerator

    loads = []

    class Counted:
        def __init__(self, **options) -> None:
            loads.append(options["model_path"])
            time.sleep(0.2)  # a load takes a while: the other thread arrives meanwhile

        def create_completion(self, *args, **kwargs) -> dict:
            return {}

    monkeypatch.setattr(llama_cpp, "Llama", Counted)
    generator = LlamaCppGenerator(n_ctx=256, prefix_cache=0)
    monkeypatch.setattr(generator, "check", lambda: "model.gguf")
    threads = [threading.Thread(target=generator.warm_up) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == ["model.gguf"] and isinstance(generator._llm, Counted)


def test_a_sessions_next_turn_over_the_same_knowledge_restores_the_whole_last_turn(generator):
    """With whole turns kept (``turn_cache``), a follow-up whose prompt repeats the last turn (same knowledge, the
    dialog grown by the reply and a new question) restores that turn after another language used the cache, so it
    evaluates only the new dialog; its reply equals plain greedy decoding's and the same decoder without turns'."""
    from ragdial.generation.llama import LlamaCppGenerator

    turns = LlamaCppGenerator(n_ctx=512, head_dir=None)  # the default: heads and turns kept
    heads = LlamaCppGenerator(n_ctx=512, head_dir=None, turn_cache=0)
    english = english_ticket_request()
    try:
        assert turns.to_config()["turn_cache"] > 0 and heads.to_config()["turn_cache"] == 0
        first = turns.generate(ticket_request(max_tokens=12))
        assert first == heads.generate(ticket_request(max_tokens=12))
        turns.generate(english)  # the other language takes the cache
        follow_up = ticket_request(max_tokens=12)
        follow_up.context = [*follow_up.context, Turn(Speaker.SYSTEM, first), Turn(Speaker.USER, "那学生票呢？")]
        reply = turns.generate(follow_up)
        stats = turns._decoder.stats
        _, head = turns.prompt_tokens(turns.fit(follow_up)[0], "zh")
        assert stats.restored_tokens == stats.reused_tokens > head > 40  # past the head: the whole last prompt
        assert stats.prompt_tokens - stats.reused_tokens < 30  # only the reply's end and the new question
        heads.generate(english)
        assert reply == heads.generate(follow_up) == generator.generate(follow_up)
        assert heads._decoder.stats.restored_tokens == head  # without turns: only the head
    finally:
        turns.close()
        heads.close()


def test_prompt_turns_show_the_model_only_the_last_dialog_turns():
    """``prompt_turns`` cuts the dialog the prompt shows to its last exchanges (whatever the context window), and
    the setting survives a config round trip; by default the last exchange and the question; 0 shows every turn that
    fits."""
    from ragdial.generation.llama import LlamaCppGenerator

    dialog = [Turn(Speaker.USER if i % 2 == 0 else Speaker.SYSTEM, f"第{i}句。") for i in range(6)]
    request = ticket_request()
    request.context = [*dialog, Turn(Speaker.USER, "云松山的门票多少钱？")]
    short = LlamaCppGenerator(n_ctx=512)
    short.count_tokens = len  # no model needed to fit the messages
    messages, _ = short.fit(request)
    assert [m["content"] for m in messages[1:]] == ["第4句。", "第5句。", "云松山的门票多少钱？"]
    assert short.to_config()["prompt_turns"] == 3
    whole = LlamaCppGenerator(n_ctx=512, prompt_turns=0)
    whole.count_tokens = len
    assert whole.to_config()["prompt_turns"] == 0 and len(whole.fit(request)[0]) == 1 + 7
    one = LlamaCppGenerator(n_ctx=512, prompt_turns=1)
    one.count_tokens = len
    assert [m["content"] for m in one.fit(request)[0][1:]] == ["云松山的门票多少钱？"]
    config = one.to_config()
    assert config.pop("name") == "llama" and LlamaCppGenerator(**config).prompt_turns == 1
