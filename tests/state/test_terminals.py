"""Display-only terminals (TM-02, TM-03, TM-05..TM-07, TM-10)."""

from __future__ import annotations

from typing import Any

import pytest
from state_updates import OMIT, b64, feed, terminal_chunk, tool

from acp2.state import TerminalState


def term(terminal_id: str = "t1", **fields: Any) -> dict[str, Any]:
    """A ``terminal_update``; ``output`` given as bytes becomes a base64 snapshot."""
    if isinstance(fields.get("output"), bytes):
        fields["output"] = {"data": b64(fields["output"])}
    if "meta" in fields:
        fields["_meta"] = fields.pop("meta")
    fields = {k: v for k, v in fields.items() if v is not OMIT}
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}


def raw_chunk(data: str, terminal_id: str = "t1") -> dict[str, Any]:
    """A ``terminal_output_chunk`` whose base64 is given verbatim."""
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}


def test_a_new_terminal_starts_empty_and_unknown_tm03() -> None:
    t = feed(term()).terminals["t1"]
    assert (t.command, t.cwd, t.exit_status, t.size, t.capabilities, t.meta) == (None,) * 6
    assert t.output == bytearray()
    assert t.text == ""
    assert not t.exited


# (case id, updates, expected bytes)
OUTPUT_CASES: list[tuple[str, list[dict[str, Any]], bytes]] = [
    ("TM-06 chunks append", [terminal_chunk("t1", b"ab"), terminal_chunk("t1", b"cd")], b"abcd"),
    (
        "TM-05 chunks AB snapshot X chunk C gives XC",
        [
            terminal_chunk("t1", b"A"),
            terminal_chunk("t1", b"B"),
            term(output=b"X"),
            terminal_chunk("t1", b"C"),
        ],
        b"XC",
    ),
    ("TM-05 a snapshot replaces, never merges", [term(output=b"hello"), term(output=b"he")], b"he"),
    ("TM-03 output null clears", [terminal_chunk("t1", b"ab"), term(output=None)], b""),
    ("TM-03 output omitted keeps", [terminal_chunk("t1", b"ab"), term(command="ls")], b"ab"),
    ("TM-06 an empty chunk adds nothing", [terminal_chunk("t1", b"a"), raw_chunk("")], b"a"),
    ("undecodable base64 is dropped", [terminal_chunk("t1", b"a"), raw_chunk("Q")], b"a"),
    (
        "an undecodable snapshot keeps the output",
        [terminal_chunk("t1", b"a"), term(output={"data": "Q"})],
        b"a",
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in OUTPUT_CASES], ids=[c[0] for c in OUTPUT_CASES]
)
def test_terminal_output_bytes_follow_snapshot_and_append_rules(
    updates: list[dict[str, Any]], expected: bytes
) -> None:
    t = feed(*updates).terminals["t1"]
    assert bytes(t.output) == expected
    assert t.text == expected.decode("utf-8")


def test_a_code_point_split_across_padded_chunks_decodes_whole_tm06() -> None:
    first, second = b64(b"\xc3"), b64(b"\xa9")
    assert (first, second) == ("ww==", "qQ==")
    state = feed(raw_chunk(b64(b"caf")), raw_chunk(first))
    t = state.terminals["t1"]
    assert t.text == "caf"
    feed(raw_chunk(second), state=state)
    assert bytes(t.output) == b"caf\xc3\xa9"
    assert t.text == "café"


def test_every_read_split_decodes_like_one_read_tm06() -> None:
    data = "añ€😀\x1b[31mred\x1b[0m".encode()
    state = feed()
    for i in range(len(data)):
        feed(terminal_chunk("t1", data[i : i + 1]), state=state)
        _ = state.terminals["t1"].text
    assert state.terminals["t1"].text == data.decode()


def test_invalid_utf8_becomes_replacement_characters_tm06() -> None:
    t = feed(terminal_chunk("t1", b"ok\xff\xfeend")).terminals["t1"]
    assert t.text == "ok\ufffd\ufffdend"
    assert bytes(t.output) == b"ok\xff\xfeend"


def test_a_snapshot_resets_the_decoder_tm05() -> None:
    state = feed(terminal_chunk("t1", b"x\xc3"))
    assert state.terminals["t1"].text == "x"
    feed(term(output=b"\xa9new"), state=state)
    assert state.terminals["t1"].text == "\ufffdnew"


def test_snapshot_then_chunk_decodes_across_the_boundary() -> None:
    state = feed(term(output=b"caf\xc3"), terminal_chunk("t1", b"\xa9!"))
    assert state.terminals["t1"].text == "café!"


def test_output_meta_belongs_to_the_snapshot_tm05() -> None:
    state = feed(term(meta={"t": 1}), term(output={"data": b64(b"x"), "_meta": {"snap": 1}}))
    t = state.terminals["t1"]
    assert (t.meta, t.output_meta) == ({"t": 1}, {"snap": 1})


def test_chunks_before_the_referencing_tool_call_are_kept_tm02() -> None:
    state = feed(
        terminal_chunk("t1", b"early "),
        tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]),
        terminal_chunk("t1", b"late"),
    )
    assert state.terminals["t1"].text == "early late"
    assert state.tool_calls["c1"].content[0].terminal_id == "t1"
    assert not any(isinstance(e, TerminalState) for e in state.timeline)


# (case id, field, successive values, attribute, expected)
FIELD_CASES: list[tuple[str, str, list[Any], str, Any]] = [
    ("TM-03 command value", "command", ["ls"], "command", "ls"),
    ("TM-03 command null clears", "command", ["ls", None], "command", None),
    ("TM-03 command omitted keeps", "command", ["ls", OMIT], "command", "ls"),
    ("TM-03 cwd value", "cwd", ["/p"], "cwd", "/p"),
    ("TM-03 cwd null clears", "cwd", ["/p", None], "cwd", None),
    ("TM-03 meta key patch", "meta", [{"a": 1}, {"b": 2}], "meta", {"a": 1, "b": 2}),
    ("TM-03 meta null clears", "meta", [{"a": 1}, None], "meta", None),
]


@pytest.mark.parametrize(
    ("field", "values", "attr", "expected"),
    [c[1:] for c in FIELD_CASES],
    ids=[c[0] for c in FIELD_CASES],
)
def test_terminal_fields_follow_the_patch_rule(
    field: str, values: list[Any], attr: str, expected: Any
) -> None:
    state = feed(*[term(**{field: value}) for value in values])
    assert getattr(state.terminals["t1"], attr) == expected


def test_a_concrete_exit_status_means_exited_and_null_clears_it_tm07() -> None:
    state = feed(term(exitStatus={}))
    t = state.terminals["t1"]
    assert t.exited
    feed(term(command="x"), state=state)
    assert t.exited
    feed(term(exitStatus=None), state=state)
    assert not t.exited


def test_negative_exit_codes_and_signals_are_accepted_tm07() -> None:
    t = feed(term(exitStatus={"exitCode": -1073741510, "signal": "SIGTERM"})).terminals["t1"]
    assert (t.exit_status.exit_code, t.exit_status.signal) == (-1073741510, "SIGTERM")


def test_size_and_capabilities_are_patch_fields_tm10() -> None:
    state = feed(term(size={"cols": 80, "rows": 24}, capabilities={"cancel": {}}))
    t = state.terminals["t1"]
    assert (t.size.cols, t.size.rows) == (80, 24)
    feed(term(size=None), state=state)
    assert t.size is None
    assert t.capabilities is not None
    feed(term(capabilities=None), state=state)
    assert t.capabilities is None


def test_output_grows_in_place() -> None:
    state = feed(terminal_chunk("t1", b"a"))
    buffer = state.terminals["t1"].output
    feed(terminal_chunk("t1", b"b"), state=state)
    assert state.terminals["t1"].output is buffer
    assert buffer == b"ab"
