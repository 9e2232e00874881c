"""The chat-completions wire format without IO: SSE decoding and chunk assembly."""

from __future__ import annotations

import pytest

from acp2.coder.messages import FINISH_STOP, FINISH_TOOL_CALLS, Message, ToolRequest
from acp2.coder.providers import ModelError
from acp2.coder.providers.chat_format import ChunkAssembler, SSEDecoder, wire_message


def test_sse_events_end_at_blank_lines_and_join_multiple_data_lines() -> None:
    decoder = SSEDecoder()
    lines = [": keep-alive", "event: message", 'data: {"a":', "data: 1}", "", "data:x", ""]
    assert [decoder.feed(line) for line in lines] == [
        None,
        None,
        None,
        None,
        '{"a":\n1}',
        None,
        "x",
    ]
    assert decoder.flush() is None


def test_a_final_event_without_a_blank_line_is_flushed() -> None:
    decoder = SSEDecoder()
    assert decoder.feed("data: [DONE]") is None
    assert decoder.flush() == "[DONE]"


def test_tool_calls_without_index_or_id_still_assemble() -> None:
    assembler = ChunkAssembler()
    assembler.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"function": {"name": "read_file", "arguments": {"path": "a"}}}
                        ]
                    },
                }
            ]
        }
    )
    reply = assembler.reply()
    assert reply.tool_calls == (ToolRequest("call_0", "read_file", '{"path": "a"}'),)
    assert reply.finish == FINISH_TOOL_CALLS  # some servers say "stop" with tool calls


def test_other_choices_and_junk_are_ignored() -> None:
    assembler = ChunkAssembler()
    assert assembler.feed({"choices": [{"index": 1, "delta": {"content": "no"}}]}) == ("", "")
    assert assembler.feed("junk") == ("", "")
    assert assembler.feed({"choices": [{"index": 0, "delta": {"content": "yes"}}]}) == ("yes", "")
    assert assembler.reply().text == "yes"
    assert assembler.reply().finish == FINISH_STOP


def test_negative_or_missing_usage_counts_become_zero() -> None:
    assembler = ChunkAssembler()
    assembler.feed({"choices": [], "usage": {"prompt_tokens": -3, "completion_tokens": 4}})
    usage = assembler.reply().usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.used) == (0, 4)


def test_cached_and_reasoning_token_details_are_read_when_the_server_gives_them() -> None:
    assembler = ChunkAssembler()
    details = {
        "prompt_tokens": 90,
        "completion_tokens": 12,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 8},
    }
    assembler.feed({"choices": [], "usage": details})
    usage = assembler.reply().usage
    assert usage is not None
    assert (usage.cached_tokens, usage.reasoning_tokens) == (64, 8)


def test_missing_or_malformed_token_details_read_as_not_reported() -> None:
    assembler = ChunkAssembler()
    bad = {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": -2}}
    assembler.feed({"choices": [], "usage": bad})
    usage = assembler.reply().usage
    assert usage is not None
    assert (usage.cached_tokens, usage.reasoning_tokens) == (None, None)


def test_an_error_object_raises_a_model_error() -> None:
    with pytest.raises(ModelError, match="quota"):
        ChunkAssembler().feed({"error": {"message": "quota exceeded"}})


@pytest.mark.parametrize(
    ("message", "wire"),
    [
        (Message("user", "hi"), {"role": "user", "content": "hi"}),
        (Message("assistant", "ok"), {"role": "assistant", "content": "ok"}),
        (
            Message("tool", "r", tool_call_id="c"),
            {"role": "tool", "tool_call_id": "c", "content": "r"},
        ),
    ],
)
def test_messages_take_the_chat_completions_shape(message: Message, wire: object) -> None:
    assert wire_message(message) == wire
