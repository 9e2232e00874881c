"""Every runtime registers its handlers from the method table, and fails at start-up on a gap.

Each runtime (the agent, the client link, the front and the back bridge) is started on a
real :class:`~acp2.rpc.Connection` over a memory pair that records what gets registered:
the methods registered are exactly the table's methods of that direction but for those
the runtime lists as unhandled on purpose. A method added to a table that the runtime
neither handles nor lists, or a capability advertised without its handler, raises
:class:`~acp2.errors.MissingHandler` when the runtime starts, before any message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

import acp2.agent.connection as agent_connection
import acp2.agent.served as served
import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema.methods as v2m
from acp2.agent import Agent, HistoryStore
from acp2.agent.capabilities import build_initialize_response
from acp2.bridge.back import BackBridge
from acp2.bridge.front import FrontBridge
from acp2.client.core import ClientCore
from acp2.errors import MissingHandler
from acp2.rpc import Connection
from acp2.rpc.handlers import CORE, expected, register
from acp2.schema import ClientCapabilities, ElicitationCapabilities
from acp2.schema.capabilities import SessionForkCapabilities
from acp2.schema.capability_methods import AGENT, CLIENT, promised
from acp2.schema.extensions import EXTENSIONS
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class Recording(Connection):
    """A real connection that also notes the method of every handler registered on it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registered: set[str] = set()
        self.ready = anyio.Event()

    def on_request(self, method: str, *args: Any) -> None:
        self.registered.add(method)
        super().on_request(method, *args)

    def on_notification(self, method: str, *args: Any, **kwargs: Any) -> None:
        self.registered.add(method)
        super().on_notification(method, *args, **kwargs)

    def on_unknown_notification(self, handler: Any) -> None:
        super().on_unknown_notification(handler)
        self.ready.set()  # the agent runtime registers this last


def connection() -> Recording:
    return Recording(memory_pair()[0], name="peer")


def added(sender: v2m.Sender) -> v2m.MethodSpec[Any, Any]:
    """A method nobody handles: what a new table row looks like to the runtimes."""
    return v2m.request("x/new_method", dict, dict, sender)


@contextmanager
def row_added(table: dict[str, Any], sender: v2m.Sender) -> Iterator[None]:
    spec = added(sender)
    table[spec.name] = spec
    try:
        yield
    finally:
        del table[spec.name]


def names(specs: Any) -> set[str]:
    return {spec.name for spec in specs}


def make_agent(**config: Any) -> Agent:
    return Agent("table-agent", store=HistoryStore(":memory:"), **config)


async def serve_agent(agent: Agent) -> set[str]:
    """Start the agent runtime on a recording connection; return what it registered."""
    conn = connection()
    with anyio.fail_after(TIMEOUT):
        async with conn, anyio.create_task_group() as tg:
            tg.start_soon(agent_connection.serve_link, agent, conn)
            await conn.ready.wait()
            await conn.aclose()
    return conn.registered


def unwrap(group: BaseException) -> BaseException:
    while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
        group = group.exceptions[0]
    return group


async def agent_start_error(agent: Agent) -> BaseException:
    """What starting ``agent`` raised (unwrapped from its task groups)."""
    with pytest.raises((MissingHandler, BaseExceptionGroup)) as caught:
        await serve_agent(agent)
    return unwrap(caught.value)


# -- registration covers the table --------------------------------------------------------


#: What the agent runtime never serves (unstable methods), and what it serves only when
#: configured to (auth methods, delete, attach).
NOT_SERVED = names(served.NOT_SERVED)
#: Unstable methods the runtime serves by default (each behind a setting that can turn it
#: off): fork, title, archive.
SERVED_BY_DEFAULT = {
    v2m.SESSION_FORK.name,
    v2m.SESSION_SET_TITLE.name,
    v2m.SESSION_ARCHIVE.name,
    v2m.SESSION_UNARCHIVE.name,
}
#: The steering extension, served only with ``steer=True``.
STEER = {"_acp2/session/steer"}
AUTH = {v2m.AUTH_LOGIN.name, v2m.AUTH_LOGOUT.name}
DELETE_ATTACH = {v2m.SESSION_DELETE.name, "_acp2/session/attach"}
MCP_OVER_ACP = {v2m.MCP_MESSAGE.name}


@pytest.mark.parametrize(
    ("config", "off"),
    [
        ({}, AUTH | MCP_OVER_ACP | STEER),
        ({"delete": False, "attach": False}, AUTH | DELETE_ATTACH | MCP_OVER_ACP | STEER),
        ({"mcp_acp": True}, AUTH | STEER),
    ],
    ids=["default", "features-off", "mcp-over-acp"],
)
async def test_the_agent_registers_exactly_the_client_methods_it_does_not_leave_out(
    config: dict[str, Any], off: set[str]
) -> None:
    registered = await serve_agent(make_agent(**config))
    table = v2m.METHODS | EXTENSIONS
    not_served = NOT_SERVED - SERVED_BY_DEFAULT
    assert registered == expected(table, "agent") - not_served - off
    assert registered | not_served | off | CORE == {
        name for name, spec in table.items() if spec.sender != "agent"
    }


async def test_the_client_link_registers_exactly_the_agent_methods() -> None:
    conn = connection()
    async with anyio.create_task_group() as tg:
        ClientCore(conn, tg).install()
    assert conn.registered == expected(v2m.METHODS, "client") - {v2m.AUTH_STATUS_UPDATE.name}


async def test_the_front_bridge_registers_every_v1_client_method_and_the_v2_agent_ones() -> None:
    v1conn, v2conn = connection(), connection()
    async with anyio.create_task_group() as tg:
        FrontBridge(v1conn, v2conn, tg).register()
    assert v1conn.registered == expected(v1m.METHODS, "agent")
    assert v2conn.registered == {v2m.SESSION_UPDATE.name, v2m.SESSION_REQUEST_PERMISSION.name}


@pytest.mark.parametrize("services", [False, True], ids=["bare", "files-and-terminals"])
async def test_the_back_bridge_registers_from_both_tables(services: bool) -> None:
    agent, client = connection(), connection()
    result = v1.InitializeResponse(protocol_version=1)
    async with anyio.create_task_group() as tg:
        BackBridge(agent, client, result, tg, files=services, terminals=services).install()
        tg.cancel_scope.cancel()
    served = names(v1m.AGENT_REQUESTS.values()) if services else set()
    v1_expected = {v1m.SESSION_UPDATE.name, v1m.SESSION_REQUEST_PERMISSION.name} | served
    assert agent.registered == v1_expected
    translated = {
        v2m.INITIALIZE,
        v2m.SESSION_NEW,
        v2m.SESSION_RESUME,
        v2m.SESSION_LIST,
        v2m.SESSION_CLOSE,
        v2m.SESSION_PROMPT,
        v2m.SESSION_CANCEL,
        v2m.SESSION_SET_CONFIG_OPTION,
        v2m.TOOL_CALL_CANCEL,
        v2m.TERMINAL_CANCEL,
    }
    assert client.registered == names(translated)


# -- a row added to a table fails every runtime of its direction at start-up ---------------


async def test_a_client_method_added_to_the_table_stops_the_agent_at_start() -> None:
    with row_added(v2m.METHODS, "client"):
        error = await agent_start_error(make_agent())
    assert isinstance(error, MissingHandler)
    assert "x/new_method" in str(error)


async def test_an_agent_method_added_to_the_table_stops_the_client_link() -> None:
    conn = connection()
    async with anyio.create_task_group() as tg:
        with row_added(v2m.METHODS, "agent"), pytest.raises(MissingHandler, match="x/new_method"):
            ClientCore(conn, tg).install()
    assert not conn.registered  # checked before anything is installed


@pytest.mark.parametrize(
    ("table", "sender"),
    [(v1m.METHODS, "client"), (v2m.METHODS, "agent")],
    ids=["v1-client-method", "v2-agent-method"],
)
async def test_a_method_added_to_either_table_stops_the_front_bridge(
    table: dict[str, Any], sender: v2m.Sender
) -> None:
    async with anyio.create_task_group() as tg:
        with row_added(table, sender), pytest.raises(MissingHandler, match="x/new_method"):
            FrontBridge(connection(), connection(), tg).register()


@pytest.mark.parametrize(
    ("table", "sender"),
    [(v1m.METHODS, "agent"), (v2m.METHODS, "client")],
    ids=["v1-agent-method", "v2-client-method"],
)
async def test_a_method_added_to_either_table_stops_the_back_bridge(
    table: dict[str, Any], sender: v2m.Sender
) -> None:
    result = v1.InitializeResponse(protocol_version=1)
    async with anyio.create_task_group() as tg:
        with row_added(table, sender), pytest.raises(MissingHandler, match="x/new_method"):
            BackBridge(connection(), connection(), result, tg).install()
        tg.cancel_scope.cancel()


# -- advertised capabilities ---------------------------------------------------------------


async def test_an_agent_advertising_a_capability_without_its_handler_fails_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def with_fork(agent: Agent, **kwargs: Any) -> Any:
        response = build_initialize_response(agent, **kwargs)
        response.capabilities.session.fork = SessionForkCapabilities()
        return response

    monkeypatch.setattr(served, "build_initialize_response", with_fork)
    with pytest.raises(MissingHandler, match="advertises methods it does not serve: session/fork"):
        served.check_advertised(make_agent(fork=False))
    error = await agent_start_error(make_agent(fork=False))  # and each connection, as it starts
    assert isinstance(error, MissingHandler)
    assert "advertised but unhandled: session/fork" in str(error)


#: An agent process whose initialize result would advertise session/fork, which it was
#: told not to serve.
FORKING_AGENT = """
import acp2.agent.served as served
from acp2.agent import Agent
from acp2.agent.capabilities import build_initialize_response
from acp2.schema.capabilities import SessionForkCapabilities

def with_fork(agent, **kwargs):
    response = build_initialize_response(agent, **kwargs)
    response.capabilities.session.fork = SessionForkCapabilities()
    return response

served.build_initialize_response = with_fork
Agent("forking", fork=False).run()
"""


def test_agent_run_refuses_to_start_before_answering_an_early_initialize() -> None:
    params = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}
    request = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    done = subprocess.run(
        [sys.executable, "-c", FORKING_AGENT],
        input=request.encode() + b"\n",
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode != 0
    assert done.stdout == b""  # nothing advertised
    assert b"MissingHandler" in done.stderr
    assert b"session/fork" in done.stderr


async def test_register_refuses_an_advertised_method_listed_as_unhandled() -> None:
    conn = connection()
    handlers: dict[Any, Callable[[Any], Any]] = {
        v2m.SESSION_UPDATE: lambda params: None,
        v2m.SESSION_REQUEST_PERMISSION: lambda params: None,
        v2m.MCP_CONNECT: lambda params: None,
        v2m.MCP_MESSAGE: lambda params: None,
        v2m.MCP_DISCONNECT: lambda params: None,
    }
    off = (v2m.ELICITATION_CREATE, v2m.ELICITATION_COMPLETE, v2m.AUTH_STATUS_UPDATE)
    caps = ClientCapabilities(elicitation=ElicitationCapabilities())
    register(conn, v2m.METHODS, "client", handlers, unhandled=off)  # not advertised: fine
    with pytest.raises(MissingHandler, match="advertised but unhandled: elicitation/complete"):
        register(
            conn, v2m.METHODS, "client", handlers, unhandled=off, advertised=promised(caps, CLIENT)
        )


async def test_register_refuses_a_handler_for_the_other_direction_or_outside_the_table() -> None:
    with pytest.raises(MissingHandler, match="not sent to the client: session/prompt, x/new"):
        register(
            connection(),
            v2m.METHODS,
            "client",
            {v2m.SESSION_PROMPT: print, added("agent"): print},
            unhandled=[s for s in v2m.METHODS.values() if s.sender == "agent"],
        )


def test_capabilities_map_to_methods_as_data() -> None:
    default = promised(build_initialize_response(make_agent()), AGENT)
    assert {v2m.SESSION_DELETE, EXTENSIONS["_acp2/session/attach"]} <= default
    assert v2m.AUTH_LOGIN not in default  # no auth methods configured
    bare = promised(build_initialize_response(make_agent(delete=False, attach=False)), AGENT)
    assert default - bare == {v2m.SESSION_DELETE, EXTENSIONS["_acp2/session/attach"]}
    assert promised(None, CLIENT) == {
        v2m.SESSION_UPDATE,
        v2m.SESSION_REQUEST_PERMISSION,
        v2m.MCP_CONNECT,  # MCP over ACP needs no client capability: every client serves it
        v2m.MCP_MESSAGE,
        v2m.MCP_DISCONNECT,
    }
    over_acp = promised(build_initialize_response(make_agent(mcp_acp=True)), AGENT)
    assert over_acp - default == {v2m.MCP_MESSAGE}
