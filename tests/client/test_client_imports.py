"""What importing the client runtime loads (issue 16: start-up time). ``import
acp2.client`` loads the package only; ``from acp2.client import connect`` loads exactly
the pinned acp2 modules and third-party packages, and nothing only some clients need.
Adding an import on that path should be a decision: update the pin here."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers.timeouts import RUN_TIMEOUT

REPORT = "import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"

CONNECT_ACP2_MODULES = {
    "acp2",
    "acp2._aio",
    "acp2._lazy",
    "acp2._groups",
    "acp2.client",
    "acp2.client._coalesce",
    "acp2.client.checks",
    "acp2.client.connection",
    "acp2.client.elicitation",
    "acp2.client.env",
    "acp2.client.launch",
    "acp2.client.core",
    "acp2.client.preview_calls",
    "acp2.client.pending",
    "acp2.client.permissions",
    "acp2.client.session",
    "acp2.client.startup",
    "acp2.client.work",
    "acp2.compat",
    "acp2.compat.v1",
    "acp2.compat.v1.negotiate",
    "acp2.diagnose",
    "acp2.errors",
    "acp2.lifecycle",
    "acp2.lifecycle.prompt_content",
    "acp2.rpc",
    "acp2.rpc.connection",
    "acp2.rpc.dispatch",
    "acp2.rpc.events",
    "acp2.rpc.framing",
    "acp2.rpc.guarded",  # the one guarded decode of a peer's JSON (client/link.raw_update)
    "acp2.rpc.handlers",  # registration from the method table
    "acp2.rpc.later",  # deferred answers (the responder binds a handler's Later)
    "acp2.rpc.messages",
    "acp2.rpc.outbox",
    "acp2.rpc.peer",
    "acp2.rpc.pending",
    "acp2.rpc.reader",
    "acp2.rpc.responder",
    "acp2.rpc.routes",
    "acp2.rpc.sniff",
    "acp2.sanitize",
    "acp2.schema",
    "acp2.state",
    "acp2.state._patch",
    "acp2.state.background",
    "acp2.state.entities",
    "acp2.state.reducer",
    "acp2.state.replay",
    "acp2.state.session",
    "acp2.state.tools",
    "acp2.transport",
    "acp2.transport.base",
}
THIRD_PARTY = {"anyio", "msgspec", "sniffio", "typing_extensions"}
# Loaded on use only: the interactive policy's thread bridge, the package metadata
# (read when connect() runs), the spawn code, the v1 models, the UI.
NOT_AT_IMPORT = (
    "anyio.from_thread",
    "importlib.metadata",
    "sqlite3",
    "acp2.agent",
    "acp2.bridge",
    "acp2.compat.v1.schema",
    "acp2.transport.stdio",
    "acp2.ui",
    "rich",
)


def loaded_by(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT.format(statement=statement)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=True,
    )
    return set(json.loads(done.stdout))


def ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "acp2" or m.startswith("acp2.")}


def test_importing_acp2_client_loads_the_package_and_no_runtime() -> None:
    loaded = loaded_by("import acp2.client")
    assert ours(loaded) == {"acp2", "acp2._lazy", "acp2.client"}
    assert not {"asyncio", "anyio", "msgspec"} & loaded


def test_importing_connect_loads_exactly_the_pinned_modules() -> None:
    loaded = loaded_by("from acp2.client import connect")
    assert {m for m in ours(loaded) if not m.startswith("acp2.schema.")} == CONNECT_ACP2_MODULES
    new = loaded - loaded_by("pass")  # not what the interpreter and site load anyway
    top = {m.split(".")[0] for m in new} - set(sys.stdlib_module_names) - {"acp2"}
    assert top == THIRD_PARTY
    assert not [m for m in loaded for n in NOT_AT_IMPORT if m == n or m.startswith(n + ".")]


def test_every_public_name_of_acp2_client_still_resolves() -> None:
    import acp2.client

    for name in acp2.client.__all__:
        assert getattr(acp2.client, name) is not None
    assert "connect" in dir(acp2.client)


def test_the_default_client_info_is_the_installed_version_without_reading_metadata() -> None:
    from importlib.metadata import version

    from acp2.client import client_info

    assert client_info().version == version("acp2")
    loaded = loaded_by("from acp2.client import client_info; client_info()")
    assert "importlib.metadata" not in loaded
