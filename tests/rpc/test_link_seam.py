"""The typed link seam (issue 25, item 2): the runtimes are written against
:class:`acp2.rpc.link.Link`, whatever stands where a connection would satisfies it
(mypy checks that), nothing is ``cast`` to a connection type to get past the checker,
and a failing request handler is answered with the one ``-32603`` of
:func:`acp2.rpc.responder.handler_failed`, over a Connection and in process alike."""

from __future__ import annotations

import ast
import inspect
import logging
import re
from pathlib import Path

import pytest

import acp2
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.agent.connection import AgentConnection, serve_link
from acp2.bridge.back import BackBridge
from acp2.bridge.front import FrontBridge
from acp2.bridge.inprocess import inprocess_pair
from acp2.client.core import ClientCore
from acp2.errors import InternalError
from acp2.rpc import Connection
from acp2.transport.memory import memory_pair

SRC = Path(acp2.__file__).parent
#: A type that stands for a peer: a cast to one hides a stand-in mypy could check.
_PEER_TYPE = re.compile(r"\b\w*(Connection|Link|End)\b")

CLOSE = v2m.SESSION_CLOSE
REQUEST = v2.CloseSessionRequest(session_id="s1")


def _casts_to_a_peer_type(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        target = node.args[0]
        text = target.value if isinstance(target, ast.Constant) else ast.unparse(target)
        if name == "cast" and isinstance(text, str) and _PEER_TYPE.search(text):
            found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_nothing_in_src_is_cast_to_a_connection_or_link_type() -> None:
    found = {
        str(path.relative_to(SRC)): hits
        for path in sorted(SRC.rglob("*.py"))
        if (hits := _casts_to_a_peer_type(ast.parse(path.read_text())))
    }
    assert found == {}


def test_the_scan_sees_both_spellings_of_such_a_cast() -> None:
    code = "cast(Connection, x)\ntyping.cast('ClientConnection', y)\ncast(int, z)\n"
    assert len(_casts_to_a_peer_type(ast.parse(code))) == 2


@pytest.mark.parametrize(
    ("function", "parameter"),
    [
        (serve_link, "conn"),
        (AgentConnection.__init__, "connection"),
        (ClientCore.__init__, "connection"),
        (FrontBridge.__init__, "v2conn"),
        (BackBridge.__init__, "client"),
        (BackBridge.__init__, "agent"),
    ],
)
def test_the_runtimes_and_bridges_take_the_link_protocol(function: object, parameter: str) -> None:
    annotation = inspect.signature(function).parameters[parameter].annotation  # type: ignore[arg-type]
    assert annotation == "Link"


async def _connection_answer(caplog: pytest.LogCaptureFixture) -> tuple[str, list[str]]:
    async def crash(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        raise KeyError("oops")

    ours, theirs = memory_pair()
    async with Connection(ours, name="agent") as served, Connection(theirs) as caller:
        served.on(CLOSE, crash)
        with pytest.raises(InternalError) as raised:
            await caller.call(CLOSE, REQUEST)
    return raised.value.message, _logged(caplog)


async def _local_answer(caplog: pytest.LogCaptureFixture) -> tuple[str, list[str]]:
    async def crash(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        raise KeyError("oops")

    _peer, ours = memory_pair()
    async with Connection(ours, name="v1") as flow:
        served, caller = inprocess_pair(flow, names=("agent", "client"))
        served.on(CLOSE, crash)
        with pytest.raises(InternalError) as raised:
            await caller.call(CLOSE, REQUEST)
    return raised.value.message, _logged(caplog)


def _logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    lines = [f"{r.name} {r.getMessage().split(' (')[0]}" for r in caplog.records if r.exc_info]
    caplog.clear()
    return lines


@pytest.mark.anyio
async def test_a_failing_handler_gets_the_same_internal_error_in_process_as_over_a_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    over_a_connection = await _connection_answer(caplog)
    in_process = await _local_answer(caplog)
    assert over_a_connection == in_process
    assert in_process == (
        "Internal error: KeyError: 'oops'",
        ["acp2.rpc agent: request handler failed"],
    )
