"""``$/cancel_request`` in both directions and closing (TR-19 .. TR-24, D-03)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acp2.errors import ConnectionClosed, RequestCancelled
from acp2.transport.memory import memory_pair
from helpers import TIMEOUT, PeerPair, raw_peer

pytestmark = pytest.mark.anyio


class Text(msgspec.Struct):
    text: str


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


def cancel(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}


async def test_tr19_caller_cancelling_its_request_cancels_the_peer_handler_in_its_direction() -> (
    None
):
    started = anyio.Event()
    handler_cancelled = anyio.Event()

    async with PeerPair() as pair:

        async def slow(_: Any) -> None:
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                handler_cancelled.set()

        pair.agent.on_request("_ext/slow", msgspec.Raw, slow)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(pair.client.request, "_ext/slow", {}, dict)
                await started.wait()
                tg.cancel_scope.cancel()
            await handler_cancelled.wait()
            await anyio.wait_all_tasks_blocked()
    client = pair.frames_from("client")
    assert client[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": 0},
    }
    answers = [f for f in pair.frames_from("agent") if f.get("id") == 0]
    assert [a["error"]["code"] for a in answers] == [-32800]  # answered once; dropped


async def test_tr21_cancelled_request_is_answered_exactly_once_with_request_cancelled() -> None:
    async def slow(_: Any) -> None:
        await anyio.sleep_forever()

    async with raw_peer() as (conn, wire):
        conn.on_request("_ext/sleep", msgspec.Raw, slow)
        await wire.send_json(request(5, "_ext/sleep"))
        await anyio.wait_all_tasks_blocked()
        await wire.send_json(cancel(5))
        reply = await wire.frame()
        assert reply["id"] == 5
        assert reply["error"]["code"] == -32800
        await wire.send_json(cancel(5))  # already answered: ignored (TR-22)
        await wire.ping()


async def test_d03_handler_may_answer_a_cancelled_request_with_its_cancellation_result() -> None:
    async def prompt(_: Any) -> dict[str, str]:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            return {"outcome": "cancelled"}
        raise AssertionError("unreachable")

    async with raw_peer() as (conn, wire):
        conn.on_request("ask", msgspec.Raw, prompt)
        await wire.send_json(request("p", "ask"))
        await anyio.wait_all_tasks_blocked()
        await wire.send_json(cancel("p"))
        assert await wire.frame() == {
            "jsonrpc": "2.0",
            "id": "p",
            "result": {"outcome": "cancelled"},
        }
        await wire.ping()


async def test_tr20_handler_that_ignores_cancellation_still_completes_normally() -> None:
    release = anyio.Event()

    async def stubborn(_: Any) -> str:
        with anyio.CancelScope(shield=True):
            await release.wait()
        return "finished"

    async with raw_peer() as (conn, wire):
        conn.on_request("work", msgspec.Raw, stubborn)
        await wire.send_json(request(1, "work"))
        await anyio.wait_all_tasks_blocked()
        await wire.send_json(cancel(1))
        await anyio.wait_all_tasks_blocked()
        release.set()
        assert await wire.frame() == {"jsonrpc": "2.0", "id": 1, "result": "finished"}
        await wire.ping()


async def test_tr22_cancel_for_unknown_or_answered_ids_or_wrong_id_type_is_ignored() -> None:
    release = anyio.Event()

    async def wait(_: Any) -> str:
        await release.wait()
        return "ok"

    async with raw_peer() as (conn, wire):
        conn.on_request("wait", msgspec.Raw, wait)
        await wire.send_json(request(1, "wait"))
        await anyio.wait_all_tasks_blocked()
        await wire.send_json(cancel("1"))  # a string 1 is another id (TR-09)
        await wire.send_json(cancel(99))
        await wire.ping()
        release.set()
        assert (await wire.frame())["result"] == "ok"
        await wire.send_json(cancel(1))  # after the response went out
        await wire.ping()


async def test_tr19_cancel_matches_only_requests_the_sender_issued() -> None:
    """A peer's cancel for id 0 never touches *our* pending request id 0."""
    async with raw_peer() as (conn, wire):
        results: list[Any] = []

        async def call() -> None:
            results.append(await conn.request("ours", {}, str))

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                sent = await wire.frame()
                assert sent["id"] == 0
                await wire.send_json(cancel(0))  # refers to the peer's own requests
                await wire.ping()
                await wire.send_json({"jsonrpc": "2.0", "id": 0, "result": "still mine"})
        assert results == ["still mine"]


async def test_tr24_cancelling_a_request_cascades_to_the_requests_its_handler_sent() -> None:
    peer_cancelled = anyio.Event()

    async with PeerPair() as pair:

        async def permission(_: Any) -> None:
            try:
                await anyio.sleep_forever()
            finally:
                peer_cancelled.set()

        async def prompt(_: Any) -> None:
            await pair.agent.request("session/request_permission", {}, dict)

        pair.client.on_request("session/request_permission", msgspec.Raw, permission)
        pair.agent.on_request("session/prompt", msgspec.Raw, prompt)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(pair.client.request, "session/prompt", {}, dict)
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()
            await peer_cancelled.wait()
            await anyio.wait_all_tasks_blocked()
    assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 0}} in (
        pair.frames_from("agent")
    )


async def test_cancelled_caller_sends_cancel_request_and_the_late_response_is_dropped() -> None:
    async with raw_peer() as (conn, wire):
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(conn.request, "slow", {}, dict)
                sent = await wire.frame()
                tg.cancel_scope.cancel()
            assert await wire.frame() == cancel(sent["id"])
            await wire.send_json({"jsonrpc": "2.0", "id": sent["id"], "result": {"late": True}})
            await wire.ping()
            assert not conn.closed


async def test_tr23_closing_while_serving_answers_the_request_cancelled_before_closing() -> None:
    started = anyio.Event()

    async def slow(_: Any) -> None:
        started.set()
        await anyio.sleep_forever()

    async with PeerPair() as pair:
        pair.agent.on_request("slow", msgspec.Raw, slow)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:

                async def close_when_started() -> None:
                    await started.wait()
                    await pair.agent.aclose()

                tg.start_soon(close_when_started)
                with pytest.raises(RequestCancelled) as info:
                    await pair.client.request("slow", {}, dict)
                assert info.value.remote


async def test_transport_closing_fails_every_pending_request_with_connection_closed() -> None:
    a, b = memory_pair()
    from acp2.rpc.connection import Connection

    async with Connection(a, name="client") as conn:
        outcomes: list[BaseException] = []

        async def call() -> None:
            try:
                await conn.request("never", {}, dict)
            except ConnectionClosed as exc:
                outcomes.append(exc)

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(call)
                await anyio.wait_all_tasks_blocked()
                await b.aclose()
            await conn.wait_closed()
    assert len(outcomes) == 3
    assert conn.closed


async def test_tr23_peer_closing_cancels_the_handlers_we_are_running() -> None:
    cancelled = anyio.Event()
    a, b = memory_pair()
    from acp2.rpc.connection import Connection

    async def slow(_: Any) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    async with Connection(a) as conn:
        conn.on_request("slow", msgspec.Raw, slow)
        await b.send(b'{"jsonrpc":"2.0","id":1,"method":"slow"}\n')
        await anyio.wait_all_tasks_blocked()
        await b.aclose()
        with anyio.fail_after(TIMEOUT):
            await cancelled.wait()
            await conn.wait_closed()


class Num(msgspec.Struct):
    n: int


async def test_closing_while_a_handler_is_awaited_settles_the_messages_read_behind_it() -> None:
    # One chunk: a notification whose handler never returns, then the answer to our
    # request, then a request of the peer. The connection closes while the reader awaits
    # the handler: our request fails ConnectionClosed (it does not hang), and the peer's
    # request is answered -32800 (no handler will ever run for it).
    outcome: list[str] = []
    async with raw_peer() as (conn, wire):
        started = anyio.Event()

        async def stuck(_: Num) -> None:
            started.set()
            await anyio.sleep_forever()

        async def serve(_: Num) -> Num:
            raise AssertionError("a request read behind a stuck handler must not run")

        conn.on_notification("stuck", Num, stuck)
        conn.on_request("serve", Num, serve)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:

                async def ask() -> None:
                    with pytest.raises(ConnectionClosed):
                        await conn.request("ask", None, dict)
                    outcome.append("ConnectionClosed")

                tg.start_soon(ask)
                rid = (await wire.frame())["id"]
                await wire.send(
                    b'{"jsonrpc":"2.0","method":"stuck","params":{"n":1}}\n'
                    + b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % rid
                    + b'{"jsonrpc":"2.0","id":"theirs","method":"serve","params":{"n":2}}\n'
                )
                await started.wait()
                await conn.aclose()
            answer = await wire.frame()
    assert outcome == ["ConnectionClosed"]
    assert answer["id"] == "theirs"
    assert answer["error"]["code"] == RequestCancelled.code
