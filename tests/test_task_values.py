"""The task branch's value readers and the HTTP channel's reading of a server reply: a value of the wrong kind is
an error (as the operation it stands for raised), never a silent default."""

from __future__ import annotations

import httpx
import pytest

from ragdial.errors import RagdialError
from ragdial.task.http_channel import HttpChannel
from ragdial.task.values import as_int, as_str, items, text_or_none


def test_the_readers_narrow_or_raise():
    assert as_int("3") == 3 and as_int(2.0) == 2 and as_int(True) == 1
    assert as_str("上海") == "上海" and items("GD") == ["G", "D"] and items(("a", 1)) == ["a", 1]
    assert text_or_none(None) is None and text_or_none(12) == "12"
    for bad, read in ((None, as_int), ([1], as_int), (3, as_str), (None, as_str), (7, items)):
        with pytest.raises(TypeError):
            read(bad)


def _channel(body: object, status: int = 200) -> HttpChannel:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    return HttpChannel("http://server", client=httpx.Client(base_url="http://server", transport=transport))


def test_the_http_channel_reads_the_reply_and_the_session():
    channel = _channel({"choices": [{"message": {"content": "您好"}}], "ragdial": {"session_id": "s1"}})
    assert channel.send("你好") == "您好" and channel.session_id == "s1"


@pytest.mark.parametrize("body", [{}, {"choices": []}, {"choices": [{"message": {"content": 5}}]}, ["x"]])
def test_a_server_answer_without_reply_text_is_one_clear_error(body):
    with pytest.raises(RagdialError, match="the response has no reply text"):
        _channel(body).send("你好")
