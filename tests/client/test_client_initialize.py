"""Initialization, version check and capability gates (IN-*, AU-02, AU-04, PL-02, SS-06)."""

from __future__ import annotations

import anyio
import pytest
from client_helpers import CWD, fake_agent, in_process, initialize_result

from acp2.client import client_info
from acp2.errors import LocalProtocolError, UnsupportedProtocolVersion
from acp2.schema import (
    AudioContent,
    EmbeddedResource,
    EmbeddedResourceResource,
    ImageContent,
    Implementation,
    McpServerStdio,
    ResourceLink,
    TextContent,
    supports,
)
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def _answer_initialize_with(result):  # type: ignore[no-untyped-def]
    async def script(fake, msg):  # type: ignore[no-untyped-def]
        method = msg.get("method")
        if method == "initialize":
            await fake.respond(msg, result)
        elif method == "session/new":
            await fake.respond(msg, {"sessionId": "s1"})

    return script


async def test_initialize_sends_version_2_our_info_and_capabilities() -> None:
    """IN-01, IN-02: initialize is the first request; version 2, info, capabilities {}."""
    info = Implementation(name="my-editor", version="9.9")
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_answer_initialize_with(initialize_result()), info=info) as (
            client,
            fake,
        ):
            first = fake.received[0]
            assert first["method"] == "initialize"
            assert first["params"] == {
                "protocolVersion": 2,
                "info": {"name": "my-editor", "version": "9.9"},
                "capabilities": {},
            }
            assert client.protocol_version == 2
            assert client.agent_info.name == "fake"


async def test_the_default_info_names_acp2() -> None:
    """IN-15: both sides send info."""
    assert client_info().name == "acp2"


async def test_the_test_agent_advertises_what_the_client_reads_by_presence() -> None:
    """IN-07: `{}` markers are detected as supported (never truthiness)."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session_caps = client.agent_capabilities.session
            assert supports(session_caps)
            assert supports(session_caps.prompt.image)  # type: ignore[union-attr]
            assert client.agent_info.name == "acp2-test-agent"


# Version 1 is accepted since issue 12 (driven through acp2.bridge.back; tests/bridge).
@pytest.mark.parametrize("version", [3, 9])
async def test_an_agent_answering_another_version_is_refused_and_disconnected(
    version: int,
) -> None:
    """IN-05: the client disconnects with a clear error naming both versions."""
    script = _answer_initialize_with(initialize_result(version=version))
    with anyio.fail_after(TIMEOUT):
        with pytest.raises(UnsupportedProtocolVersion, match=f"version {version}"):
            async with fake_agent(script):
                pytest.fail("connected despite the version")  # pragma: no cover


async def test_an_agent_answering_32022_is_refused_with_the_supported_versions() -> None:
    """D-05 (accept): -32022 becomes UnsupportedProtocolVersion with its data."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if msg.get("method") == "initialize":
            await fake.error(msg, -32022, "Unsupported", {"requested": 2, "supported": [3]})

    with anyio.fail_after(TIMEOUT):
        with pytest.raises(UnsupportedProtocolVersion) as caught:
            async with fake_agent(script):
                pass  # pragma: no cover
    assert caught.value.data == {"requested": 2, "supported": [3]}


async def test_an_agent_that_never_answers_initialize_times_out_clearly() -> None:
    """Bounded waits: no answer within the caller's limit is a TimeoutError."""

    async def silent(fake, msg):  # type: ignore[no-untyped-def]
        return None

    with anyio.fail_after(TIMEOUT):
        with pytest.raises(TimeoutError, match="did not answer initialize"):
            async with fake_agent(silent, initialize_timeout=0.2):
                pass  # pragma: no cover


async def test_a_lenient_capability_value_reads_as_unsupported() -> None:
    """IN-16: a malformed marker is treated as absent; initialize still succeeds."""
    result = initialize_result()
    result["capabilities"]["session"]["prompt"] = "yes"
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_answer_initialize_with(result)) as (client, _fake):
            session = await client.new_session()
            with pytest.raises(LocalProtocolError, match="image"):
                await session.prompt([ImageContent(data="AA==", mime_type="image/png")])


def _blocks():  # type: ignore[no-untyped-def]
    resource = EmbeddedResourceResource(uri="file:///a.txt", text="a")
    return {
        "image": ImageContent(data="AA==", mime_type="image/png"),
        "audio": AudioContent(data="AA==", mime_type="audio/wav"),
        "embeddedContext": EmbeddedResource(resource=resource),
    }


@pytest.mark.parametrize("kind", ["image", "audio", "embeddedContext"])
async def test_prompt_content_the_agent_did_not_advertise_is_refused_locally(kind: str) -> None:
    """PL-02: refused with LocalProtocolError; nothing is sent."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_answer_initialize_with(initialize_result())) as (client, fake):
            session = await client.new_session()
            sent = len(fake.received)
            with pytest.raises(LocalProtocolError, match=kind):
                await session.prompt([TextContent(text="look"), _blocks()[kind]])
            with pytest.raises(LocalProtocolError, match="at least one"):
                await session.prompt([])
            assert len(fake.received) == sent


async def test_text_and_resource_links_are_always_allowed() -> None:
    """IN-11, PL-02: text and resource_link need no capability."""
    link = ResourceLink(name="a", uri="file:///a.txt")
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt([TextContent(text="echo hi"), link])
            assert await work.wait() == "end_turn"


async def test_an_advertised_image_capability_lets_images_through() -> None:
    """IN-07: `image: {}` means supported."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            image = ImageContent(data="AA==", mime_type="image/png")
            work = await session.prompt([TextContent(text="echo img"), image])
            assert await work.wait() == "end_turn"


async def test_unadvertised_session_features_are_refused_without_sending() -> None:
    """SS-06, SS-08, SS-23, AU-02, IN-09: additionalDirectories, MCP, delete and auth."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_answer_initialize_with(initialize_result())) as (client, fake):
            sent = len(fake.received)
            with pytest.raises(LocalProtocolError, match="additionalDirectories"):
                await client.new_session(CWD, additional_directories=["/tmp"])
            server = McpServerStdio(name="m", command="/bin/true")
            with pytest.raises(LocalProtocolError, match=r"mcp\.stdio"):
                await client.new_session(CWD, mcp_servers=[server])
            with pytest.raises(LocalProtocolError, match="delete"):
                await client.delete("s1")
            with pytest.raises(LocalProtocolError, match="authMethods"):
                await client.login("x")
            with pytest.raises(LocalProtocolError, match="authMethods"):
                await client.logout()
            with pytest.raises(LocalProtocolError, match="absolute"):
                await client.new_session("relative/dir")
            assert len(fake.received) == sent


async def test_an_agent_without_session_support_gets_no_session_requests() -> None:
    """IN-09: without capabilities.session there are no session methods."""
    result = {"protocolVersion": 2, "info": {"name": "x", "version": "1"}, "capabilities": {}}
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_answer_initialize_with(result)) as (client, _fake):
            with pytest.raises(LocalProtocolError, match="session support"):
                await client.new_session()


async def test_login_refuses_terminal_methods_and_sends_agent_methods() -> None:
    """AU-04: a terminal method is never sent to auth/login; an agent method is."""
    result = initialize_result()
    result["authMethods"] = [
        {"type": "terminal", "methodId": "tty", "name": "Terminal"},
        {"type": "agent", "methodId": "key", "name": "API key"},
    ]

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if msg.get("method") == "initialize":
            await fake.respond(msg, result)
        elif msg.get("method") in ("auth/login", "auth/logout"):
            await fake.respond(msg, {})

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            with pytest.raises(LocalProtocolError, match="terminal"):
                await client.login("tty")
            with pytest.raises(LocalProtocolError, match="does not advertise"):
                await client.login("other")
            await client.login("key")
            await client.logout()
            sent = [m["method"] for m in fake.received if "method" in m]
            assert sent == ["initialize", "auth/login", "auth/logout"]
