"""Connection between two peers: requests, notifications, ids, errors, ordering,
coalescing and backpressure (TR-01, TR-02, TR-07, TR-09, TR-10, TR-11, TR-12)."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest

from acp2.errors import (
    ConnectionClosed,
    InternalError,
    InvalidParams,
    LocalProtocolError,
    MethodNotFound,
    RemoteProtocolError,
    RequestError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from acp2.rpc.connection import Connection
from acp2.schema.methods import notification, request
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers import TIMEOUT, PeerPair, raw_peer

pytestmark = pytest.mark.anyio


class Text(msgspec.Struct):
    text: str


class Num(msgspec.Struct):
    n: int


async def echo(params: Text) -> Text:
    return params


async def test_request_returns_the_decoded_result_and_every_frame_is_strict_jsonrpc() -> None:
    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT):
            assert await pair.client.request("echo", Text("hi"), Text) == Text("hi")
            assert await pair.client.request("echo", {"text": "d"}, dict) == {"text": "d"}
    assert [f["id"] for f in pair.frames_from("client")] == [0, 1]


ECHO = request("echo", Text, Text, "client")
SHOUT = notification("shout", Text, "client")


async def test_call_and_on_take_method_table_entries_and_return_the_typed_result() -> None:
    heard: list[Text] = []
    async with PeerPair() as pair:
        pair.agent.on(ECHO, echo)
        pair.agent.on(SHOUT, heard.append)
        with anyio.fail_after(TIMEOUT):
            await pair.client.notify(SHOUT, Text("hey"))
            result = await pair.client.call(ECHO, Text("hi"))
    assert result == Text("hi")
    assert heard == [Text("hey")]
    assert [f["method"] for f in pair.frames_from("client")] == ["shout", "echo"]


async def test_tr02_newlines_and_line_separators_in_strings_round_trip_in_one_frame() -> None:
    text = "a\nb\u2028c\r\nd\u2029"
    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT):
            assert await pair.client.request("echo", Text(text), Text) == Text(text)
    assert all(b"\n" not in frame for _, frame in pair.sent)


async def test_tr10_same_id_live_in_both_directions_resolves_each_correctly() -> None:
    async with PeerPair() as pair:

        async def agent_side(params: Text) -> Text:
            # The client's request id 0 is still pending while the agent sends its own id 0.
            reply = await pair.agent.request("client/echo", Text("from agent"), Text)
            return Text(params.text + "+" + reply.text)

        pair.agent.on_request("outer", Text, agent_side)
        pair.client.on_request("client/echo", Text, echo)
        with anyio.fail_after(TIMEOUT):
            result = await pair.client.request("outer", Text("from client"), Text)
        assert result == Text("from client+from agent")
    assert pair.frames_from("client")[0]["id"] == 0
    assert pair.frames_from("agent")[0] == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "client/echo",
        "params": {"text": "from agent"},
    }


async def test_tr09_ids_1_and_string_1_are_answered_concurrently_with_matching_types() -> None:
    release = anyio.Event()

    async def slow(params: Text) -> Text:
        await release.wait()
        return params

    async with raw_peer() as (conn, wire):
        conn.on_request("slow", Text, slow)
        await wire.send_json(
            {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"text": "int"}}
        )
        await wire.send_json(
            {"jsonrpc": "2.0", "id": "1", "method": "slow", "params": {"text": "s"}}
        )
        await anyio.wait_all_tasks_blocked()
        release.set()
        replies = [await wire.frame(), await wire.frame()]
        by_type = {type(r["id"]): r["result"]["text"] for r in replies}
        assert by_type == {int: "int", str: "s"}
        await wire.ping()  # exactly once each: nothing else was written


async def test_tr10_outgoing_ids_are_integers_and_distinct_while_pending() -> None:
    async with raw_peer() as (conn, wire):
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(conn.request, "m", None, msgspec.Raw)
            ids = [(await wire.frame())["id"] for _ in range(5)]
            for rid in ids:
                await wire.send_json({"jsonrpc": "2.0", "id": rid, "result": None})
        assert all(type(rid) is int for rid in ids)
        assert len(set(ids)) == 5


async def test_tr11_unknown_request_gets_method_not_found_unless_a_fallback_is_set() -> None:
    async with PeerPair() as pair:
        with anyio.fail_after(TIMEOUT):
            with pytest.raises(MethodNotFound) as info:
                await pair.client.request("_vendor/thing", {}, dict)
            assert info.value.remote
            assert info.value.code == -32601

            async def fallback(method: str, params: msgspec.Raw | None) -> dict[str, Any]:
                if not method.startswith("_"):
                    raise MethodNotFound()
                return {"method": method, "params": msgspec.json.decode(params or b"null")}

            pair.agent.on_unknown_request(fallback)
            got = await pair.client.request("_vendor/thing", {"a": 1}, dict)
            assert got == {"method": "_vendor/thing", "params": {"a": 1}}
            with pytest.raises(MethodNotFound):
                await pair.client.request("session/load", {}, dict)


async def test_tr11_unknown_notifications_are_ignored_or_passed_to_the_fallback() -> None:
    seen: list[tuple[str, Any]] = []

    async def fallback(method: str, params: msgspec.Raw | None) -> None:
        seen.append((method, None if params is None else bytes(params)))

    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        await pair.client.notify("_x/ignored", {"a": 1})
        with anyio.fail_after(TIMEOUT):
            await pair.client.request("echo", Text("sync"), Text)
        pair.agent.on_unknown_notification(fallback)
        await pair.client.notify("_x/seen", {"a": 1})
        await pair.client.notify("foo/bar", None)
        with anyio.fail_after(TIMEOUT):
            await pair.client.request("echo", Text("sync"), Text)
    assert seen == [("_x/seen", b'{"a":1}'), ("foo/bar", None)]


async def test_tr12_request_errors_are_sent_as_is_with_their_data() -> None:
    async def fail(params: Num) -> None:
        if params.n == 1:
            raise ResourceNotFound("No such session", {"sessionId": "s1"})
        if params.n == 2:
            raise UnsupportedProtocolVersion(data={"requested": 9, "supported": [2]})
        raise RequestError("Custom failure", code=-31999)

    async with PeerPair() as pair:
        pair.agent.on_request("fail", Num, fail)
        with anyio.fail_after(TIMEOUT):
            with pytest.raises(ResourceNotFound) as info:
                await pair.client.request("fail", Num(1), dict)
            assert info.value.data == {"sessionId": "s1"}
            assert info.value.remote
            with pytest.raises(UnsupportedProtocolVersion) as info2:
                await pair.client.request("fail", Num(2), dict)
            assert info2.value.data == {"requested": 9, "supported": [2]}
            with pytest.raises(RequestError) as info3:
                await pair.client.request("fail", Num(3), dict)
            assert type(info3.value) is RequestError
            assert info3.value.code == -31999


async def test_tr12_other_handler_exceptions_become_one_line_internal_errors_and_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash(_: Any) -> None:
        raise ValueError("first line\nsecond line")

    async with PeerPair() as pair:
        pair.agent.on_request("crash", msgspec.Raw, crash)
        with anyio.fail_after(TIMEOUT), pytest.raises(InternalError) as info:
            await pair.client.request("crash", {}, dict)
    assert info.value.message == "Internal error: ValueError: first line"
    logged = [r for r in caplog.records if r.name == "acp2.rpc" and r.exc_info]
    assert [r.getMessage() for r in logged] == ["agent: request handler failed (id 0)"]


async def test_unencodable_result_becomes_internal_error() -> None:
    async def bad(_: Any) -> object:
        return object()

    async with PeerPair() as pair:
        pair.agent.on_request("bad", msgspec.Raw, bad)
        with anyio.fail_after(TIMEOUT), pytest.raises(InternalError):
            await pair.client.request("bad", {}, dict)


async def test_params_that_do_not_decode_get_invalid_params() -> None:
    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT), pytest.raises(InvalidParams) as info:
            await pair.client.request("echo", {"text": 5}, Text)
    assert "$.text" in info.value.message


async def test_a_malformed_result_raises_remote_protocol_error() -> None:
    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT), pytest.raises(RemoteProtocolError):
            await pair.client.request("echo", Text("x"), Num)


async def test_tr12_unknown_error_code_from_the_peer_surfaces_as_a_generic_error() -> None:
    async with raw_peer() as (conn, wire), anyio.create_task_group() as tg:

        async def call() -> None:
            with pytest.raises(RequestError) as info:
                await conn.request("m", None, dict)
            assert info.value.code == -31999
            assert info.value.data == {"why": [1]}

        tg.start_soon(call)
        rid = (await wire.frame())["id"]
        error = {"code": -31999, "message": "odd", "data": {"why": [1]}}
        await wire.send_json({"jsonrpc": "2.0", "id": rid, "error": error})


async def test_response_is_delivered_after_every_earlier_notification_was_handled() -> None:
    seen: list[int] = []

    async def on_tick(params: Num) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(params.n)

    async with PeerPair() as pair:

        async def burst(params: Num) -> int:
            for i in range(params.n):
                pair.agent.send_notification_nowait("tick", Num(i))
            return params.n

        pair.client.on_notification("tick", Num, on_tick)
        pair.agent.on_request("burst", Num, burst)
        with anyio.fail_after(TIMEOUT):
            assert await pair.client.request("burst", Num(200), int) == 200
        assert seen == list(range(200))


async def test_response_is_written_before_work_the_handler_started_with_start_soon() -> None:
    async with PeerPair() as pair, anyio.create_task_group() as tg:

        async def later() -> None:
            pair.agent.send_notification_nowait("after", None)

        async def handler(_: Any) -> str:
            tg.start_soon(later)
            await anyio.lowlevel.checkpoint()
            tg.start_soon(later)
            return "done"

        pair.agent.on_request("go", msgspec.Raw, handler)
        with anyio.fail_after(TIMEOUT):
            assert await pair.client.request("go", {}, str) == "done"
            await anyio.wait_all_tasks_blocked()
    frames = pair.frames_from("agent")
    response_at = next(i for i, f in enumerate(frames) if "result" in f)
    assert [f.get("method") for f in frames[response_at + 1 :]] == ["after"]


class CountingTransport:
    """Wraps a transport and records every chunk sent."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.chunks: list[bytes] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, data: bytes) -> None:
        self.chunks.append(data)
        await self.inner.send(data)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_outgoing_frames_keep_send_order_and_are_coalesced_into_one_write() -> None:
    a, b = memory_pair()
    counting = CountingTransport(a)
    async with Connection(counting) as conn:
        for i in range(100):
            conn.send_notification_nowait("n", Num(i))
        await conn.notify("n", Num(100))
        with anyio.fail_after(TIMEOUT):
            data = b""
            while data.count(b"\n") < 101:
                data += await b.receive()
    assert len(counting.chunks) == 1
    numbers = [msgspec.json.decode(line)["params"]["n"] for line in data.splitlines()]
    assert numbers == list(range(101))


async def test_notify_waits_above_the_high_water_mark_until_the_writer_drains() -> None:
    a, b = memory_pair(max_buffered_chunks=1)
    async with Connection(a, high_water=1000) as conn:
        conn.send_notification_nowait("fill", {"x": "y" * 2000})  # taken by the writer
        await anyio.wait_all_tasks_blocked()
        conn.send_notification_nowait("fill", {"x": "y" * 2000})  # blocks in transport.send
        await anyio.wait_all_tasks_blocked()
        done = anyio.Event()

        async def notify() -> None:
            await conn.notify("more", {"x": "z" * 2000})
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(notify)
            await anyio.wait_all_tasks_blocked()
            assert not done.is_set()
            with anyio.fail_after(TIMEOUT):
                while not done.is_set():
                    assert await b.receive()
        assert done.is_set()


async def test_tap_sees_every_frame_in_both_directions() -> None:
    taps: list[tuple[str, bytes]] = []
    a, b = memory_pair()
    async with Connection(a, tap=lambda d, f: taps.append((d, f))) as conn, Connection(b) as peer:
        peer.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT):
            await conn.request("echo", Text("t"), Text)
    assert taps == [
        ("out", b'{"jsonrpc":"2.0","id":0,"method":"echo","params":{"text":"t"}}'),
        ("in", b'{"jsonrpc":"2.0","id":0,"result":{"text":"t"}}'),
    ]


async def test_request_inside_a_notification_handler_is_refused_instead_of_deadlocking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors: list[BaseException] = []

    async with PeerPair() as pair:

        async def on_note(_: Any) -> None:
            try:
                await pair.agent.request("x", None, dict)
            except LocalProtocolError as exc:
                errors.append(exc)

        pair.agent.on_notification("n", msgspec.Raw, on_note)
        pair.agent.on_request("echo", Text, echo)
        await pair.client.notify("n", {})
        with anyio.fail_after(TIMEOUT):
            await pair.client.request("echo", Text("sync"), Text)
    assert len(errors) == 1


async def test_using_a_connection_outside_async_with_is_an_error() -> None:
    a, _ = memory_pair()
    conn = Connection(a)
    with pytest.raises(LocalProtocolError):
        await conn.request("m", None, dict)
    with pytest.raises(LocalProtocolError):
        conn.on_request("$/cancel_request", msgspec.Raw, echo)  # type: ignore[arg-type]


async def test_after_close_requests_and_notifications_raise_connection_closed() -> None:
    async with PeerPair() as pair:
        await pair.client.aclose()
        assert pair.client.closed
        with pytest.raises(ConnectionClosed):
            await pair.client.request("m", None, dict)
        with pytest.raises(ConnectionClosed):
            await pair.client.notify("m", None)
        with anyio.fail_after(TIMEOUT):
            await pair.agent.wait_closed()
        assert pair.agent.closed


async def test_notification_handler_failures_are_logged_and_do_not_stop_the_reader(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def boom(_: Any) -> None:
        raise RuntimeError("nope")

    async with PeerPair() as pair:
        pair.agent.on_notification("boom", msgspec.Raw, boom)
        pair.agent.on_request("echo", Text, echo)
        with caplog.at_level(logging.ERROR, logger="acp2.rpc"):
            await pair.client.notify("boom", {})
            with anyio.fail_after(TIMEOUT):
                assert await pair.client.request("echo", Text("alive"), Text) == Text("alive")
    assert any("boom" in r.getMessage() for r in caplog.records)


class TrickleTransport(CountingTransport):
    """A custom transport that hands over one byte per receive."""

    def __init__(self, inner: MemoryTransport) -> None:
        super().__init__(inner)
        self.pending = b""

    async def receive(self) -> bytes:
        if not self.pending:
            self.pending = await self.inner.receive()
            if not self.pending:
                return b""
        byte, self.pending = self.pending[:1], self.pending[1:]
        return byte


async def test_tr07_a_custom_transport_keeps_the_message_format_and_lifecycle() -> None:
    """TR-07 is review-only: any object with receive/send/aclose (acp2.transport.base)
    carries the protocol unchanged, because framing and every message rule live in the
    Connection, not in the transport. Here: one byte per receive."""
    a, b = memory_pair()
    async with Connection(TrickleTransport(a)) as conn, Connection(b) as peer:
        peer.on_request("echo", Text, echo)
        with anyio.fail_after(TIMEOUT):
            assert await conn.request("echo", Text("a\nb\u2028"), Text) == Text("a\nb\u2028")


async def test_notify_stops_a_cancelled_caller_within_a_few_dozen_calls() -> None:
    a, _b = memory_pair()
    sent = 0
    async with Connection(a) as conn:
        with anyio.CancelScope() as scope:
            scope.cancel()  # e.g. cancelled while its task was already runnable
            for _ in range(1000):
                await conn.notify("n", None)
                sent += 1
    assert sent < 64


async def test_send_notification_nowait_never_waits_even_above_the_high_water_mark() -> None:
    a, _b = memory_pair(max_buffered_chunks=1)
    async with Connection(a, high_water=100) as conn:
        for _ in range(100):
            conn.send_notification_nowait("n", {"pad": "x" * 100})
        assert conn._outbox.over_high_water


async def test_pre_encoded_frames_are_sent_in_order_after_flush_hooks_ran() -> None:
    events: list[str] = []
    a, b = memory_pair()
    async with Connection(a) as conn:
        conn.add_flush_hook(lambda: events.append("hook"))
        conn.send_frame_nowait(b'{"jsonrpc":"2.0","method":"pre","params":{"n":1}}')
        conn.send_notification_nowait("typed", Num(2))
        assert not conn.congested
        await conn.drain()
        with pytest.raises(LocalProtocolError):
            conn.send_frame_nowait(b'{"a":\n1}')
        with anyio.fail_after(TIMEOUT):
            data = await b.receive()
            events.append("written")
    assert data == (
        b'{"jsonrpc":"2.0","method":"pre","params":{"n":1}}\n'
        b'{"jsonrpc":"2.0","method":"typed","params":{"n":2}}\n'
    )
    assert events[:2] == ["hook", "written"]


async def test_a_run_of_frames_is_written_in_order_with_the_frames_around_it() -> None:
    a, b = memory_pair()
    async with Connection(a) as conn:
        conn.send_frame_nowait(b'{"jsonrpc":"2.0","method":"one"}')
        conn.send_frames_nowait(b'{"jsonrpc":"2.0","method":"two"}\n{"jsonrpc":"2.0","method":"3"}')
        conn.send_notification_nowait("four", None)
        with anyio.fail_after(TIMEOUT):
            data = await b.receive()
    methods = [json.loads(line)["method"] for line in data.splitlines()]
    assert methods == ["one", "two", "3", "four"]
    assert data.endswith(b"\n")


async def test_a_failing_flush_hook_is_logged_and_the_write_goes_ahead(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise RuntimeError("disk full")

    a, b = memory_pair()
    async with Connection(a) as conn:
        conn.add_flush_hook(broken)
        conn.send_notification_nowait("n", None)
        with anyio.fail_after(TIMEOUT):
            assert await b.receive() == b'{"jsonrpc":"2.0","method":"n"}\n'
    assert any("flush hook" in r.getMessage() for r in caplog.records)


async def test_a_connection_keeps_fewer_than_30_instance_attributes() -> None:
    # Past 30, CPython 3.11 instance dicts stop sharing keys: every attribute access on
    # the hot paths gets slower (see Connection.__init__).
    ours, _theirs = memory_pair()
    async with Connection(ours) as conn:
        assert len(vars(conn)) < 30


async def test_an_unhandled_notification_is_logged_at_debug_not_dropped_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with PeerPair() as pair:
        pair.agent.on_request("echo", Text, echo)
        with caplog.at_level(logging.DEBUG, logger="acp2.rpc"):
            await pair.client.notify("auth/status_update", {"state": "unauthenticated"})
            with anyio.fail_after(TIMEOUT):
                await pair.client.request("echo", Text("sync"), Text)
    assert any(
        r.levelno == logging.DEBUG and "auth/status_update" in r.getMessage()
        for r in caplog.records
    )
