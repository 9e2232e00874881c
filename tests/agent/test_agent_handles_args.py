"""What agent authors pass to ``Turn`` and the tool-call handle: natural values become
valid wire models, anything else is a ``TypeError`` at the call and nothing is sent.

Every conversation here is validated against both schema drafts on exit (the harness),
so a frame the client would drop fails the test."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from agent_harness import agent_harness, make_agent
from msgspec import Raw

from acp2.agent import Turn, arguments
from acp2.schema import (
    Content,
    Diff,
    DiffModifyChange,
    ImageContent,
    PermissionOption,
    PlanEntry,
    ResourceLink,
    TextContent,
)

pytestmark = pytest.mark.anyio

TEXT = {"type": "content", "content": {"type": "text", "text": "hi"}}


async def updates_of(handler: Callable[[Turn], Awaitable[None]]) -> list[dict[str, Any]]:
    """Run one turn of an agent whose handler is ``handler``; the updates it sent."""
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await handler(turn)
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "go")
        assert idle["stopReason"] == "end_turn", idle
        updates = h.updates(sid)
    skip = {"user_message", "state_update"}
    return [u for u in updates if u["sessionUpdate"] not in skip]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("hi", TEXT),
        (TextContent(text="hi"), TEXT),
        ({"type": "text", "text": "hi"}, TEXT),
        (TEXT, TEXT),
        (Content(content=TextContent(text="hi")), TEXT),
        (
            ResourceLink(name="a", uri="file:///a"),
            {
                "type": "content",
                "content": {"type": "resource_link", "name": "a", "uri": "file:///a"},
            },
        ),
        (
            {"type": "image", "data": "AAAA", "mime_type": "image/png"},
            {
                "type": "content",
                "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            },
        ),
        ({"type": "terminal", "terminal_id": "t1"}, {"type": "terminal", "terminalId": "t1"}),
        ({"type": "_my/widget", "n": 1}, {"type": "_my/widget", "n": 1}),
    ],
)
async def test_add_content_turns_natural_values_into_tool_call_content(
    item: Any, expected: dict[str, Any]
) -> None:
    async def handler(turn: Turn) -> None:
        call = await turn.tool_call("Read a file", kind="read")
        await call.add_content(item)
        await call.complete()

    chunks = [
        u for u in await updates_of(handler) if u["sessionUpdate"] == "tool_call_content_chunk"
    ]
    assert [c["content"] for c in chunks] == [expected]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (42, "add_content() takes a string, a content block"),
        (["a", "b"], "not list"),
        ({"text": "no type"}, "unknown type None"),
        ({"type": "txt", "text": "x"}, "unknown type 'txt'"),
        ({"type": "text", "text": 5}, "Expected `str`, got `int`"),
        (TextContent(text=5), "Expected `str`, got `int`"),  # type: ignore[arg-type]
        (ImageContent(data="x", mime_type=None), "mimeType"),  # type: ignore[arg-type]
    ],
)
async def test_add_content_rejects_what_it_cannot_send_with_a_type_error_at_the_call(
    bad: Any, message: str
) -> None:
    raised: list[TypeError] = []

    async def handler(turn: Turn) -> None:
        call = await turn.tool_call("Run")
        try:
            await call.add_content(bad)
        except TypeError as exc:
            raised.append(exc)
        await call.complete()

    updates = await updates_of(handler)
    assert len(raised) == 1
    assert message in str(raised[0])
    assert "tool_call_content_chunk" not in [u["sessionUpdate"] for u in updates]


async def test_complete_and_fail_take_one_item_or_a_list_and_tool_call_takes_content() -> None:
    diff = Diff(changes=[DiffModifyChange(path="/tmp/a.py")])

    async def handler(turn: Turn) -> None:
        first = await turn.tool_call("Edit", kind="edit", content=diff, locations=["/tmp/a.py"])
        await first.complete(content="Edited a.py.")
        second = await turn.tool_call("Run tests", kind="execute")
        await second.fail(content=["2 failed", TextContent(text="see log")])

    updates = await updates_of(handler)
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert calls[0]["content"][0]["type"] == "diff"
    assert calls[0]["locations"] == [{"path": "/tmp/a.py"}]
    assert calls[1]["status"] == "completed"
    assert calls[1]["content"] == [
        {"type": "content", "content": {"type": "text", "text": "Edited a.py."}}
    ]
    assert [c["content"]["text"] for c in calls[3]["content"]] == ["2 failed", "see log"]
    assert calls[3]["status"] == "failed"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.complete(content=3), "content= takes a string"),
        (lambda c: c.fail(content=[None]), "content= takes a string"),
        (lambda c: c.update(status=1), "status= takes a string or None, not int"),
        (lambda c: c.update(locations=5), "locations= takes a list of paths"),
        (lambda c: c.update(nonsense=1), "nonsense"),
    ],
)
async def test_handle_patches_that_do_not_fit_raise_and_send_nothing(
    call: Callable[[Any], Awaitable[None]], message: str
) -> None:
    raised: list[TypeError] = []

    async def handler(turn: Turn) -> None:
        handle = await turn.tool_call("Run")
        try:
            await call(handle)
        except TypeError as exc:
            raised.append(exc)
        await handle.cancel()

    updates = await updates_of(handler)
    assert len(raised) == 1
    assert message in str(raised[0])
    statuses = [u.get("status") for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert statuses == ["pending", "cancelled"]


async def test_plan_takes_strings_dicts_and_plan_entries() -> None:
    async def handler(turn: Turn) -> None:
        await turn.plan(
            [
                "Read the failing test",
                {"content": "Fix the bug", "priority": "high"},
                PlanEntry(content="Run the tests", priority="low", status="completed"),
            ]
        )

    (update,) = await updates_of(handler)
    assert update["plan"]["entries"] == [
        {"content": "Read the failing test", "priority": "medium", "status": "pending"},
        {"content": "Fix the bug", "priority": "high", "status": "pending"},
        {"content": "Run the tests", "priority": "low", "status": "completed"},
    ]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("one string", "plan() takes a list of plan entries, not one str"),
        ({"content": "a dict"}, "not one dict"),
        ([3], "plan() takes plan entries"),
        ([{"priority": "high"}], "content"),
        ([{"content": "x", "colour": "red"}], "colour"),
        ([PlanEntry(content="x", priority=1, status="pending")], "Expected `str`"),  # type: ignore[arg-type]
    ],
)
async def test_plan_rejects_what_is_not_a_list_of_entries(entries: Any, message: str) -> None:
    raised: list[TypeError] = []

    async def handler(turn: Turn) -> None:
        try:
            await turn.plan(entries)
        except TypeError as exc:
            raised.append(exc)

    assert await updates_of(handler) == []
    assert len(raised) == 1
    assert message in str(raised[0])


async def test_say_message_commands_and_permission_options_check_their_arguments() -> None:
    raised: list[str] = []

    async def attempt(coro: Awaitable[Any]) -> None:
        try:
            await coro
        except TypeError as exc:
            raised.append(str(exc))

    async def handler(turn: Turn) -> None:
        await attempt(turn.say(["not", "text"]))  # type: ignore[arg-type]
        await attempt(turn.think(None))  # type: ignore[arg-type]
        await attempt(turn.message(7))  # type: ignore[arg-type]
        await attempt(turn.commands("help"))  # type: ignore[arg-type]
        await attempt(turn.request_permission("Go?", options=["yes", "no"]))  # type: ignore[list-item]
        await turn.message(["Done: ", {"type": "text", "text": "all good"}])
        await turn.commands([{"name": "test", "description": "Run the tests"}])

    updates = await updates_of(handler)
    assert raised == [
        "say() takes a string, not list",
        "think() takes a string, not NoneType",
        "message() takes a string, a content block (TextContent, ImageContent, ...) or its "
        "dict, or a list of them; not int",
        "commands() takes a list of AvailableCommand (or dicts), not str",
        "request_permission(options=): expected a PermissionOption or a dict with option_id, "
        "name and kind, not 'yes'",
    ]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds == ["agent_message", "available_commands_update"]
    assert [b["text"] for b in updates[0]["content"]] == ["Done: ", "all good"]


async def test_permission_options_may_be_dicts_in_python_or_wire_spelling() -> None:
    options = arguments.permission_options(
        [
            {"option_id": "yes", "name": "Yes", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"},
            PermissionOption(option_id="never", name="Never", kind="reject_always"),
        ],
        "options",
    )
    assert [o.option_id for o in options] == ["yes", "no", "never"]


def test_a_custom_underscore_block_passes_through_as_raw() -> None:
    item = arguments.tool_call_content({"type": "_x/thing", "value_one": 1}, "add_content()")
    assert isinstance(item, Raw)
    assert bytes(item) == b'{"type":"_x/thing","valueOne":1}'


async def test_a_terminal_takes_text_or_bytes_and_rejects_other_output() -> None:
    raised: list[str] = []

    async def handler(turn: Turn) -> None:
        term = await turn.terminal("make test")
        await term.write("ok ✓\n")
        await term.write(b"\x1b[32mgreen\x1b[0m\n")
        try:
            await term.write(42)  # type: ignore[arg-type]
        except TypeError as exc:
            raised.append(str(exc))
        await term.exit(0)

    updates = await updates_of(handler)
    chunks = [u["data"] for u in updates if u["sessionUpdate"] == "terminal_output_chunk"]
    assert [base64.b64decode(c) for c in chunks] == ["ok ✓\n".encode(), b"\x1b[32mgreen\x1b[0m\n"]
    assert raised == ["write() takes bytes or a string, not int"]
