"""The public surface of the ``acp2`` package is small, sorted and pinned."""

from __future__ import annotations

import subprocess
import sys

import acp2

PINNED = [
    "Acp2Error",
    "Agent",
    "AgentSession",
    "ClientConnection",
    "ClientSession",
    "Connection",
    "ConnectionClosed",
    "LocalProtocolError",
    "RemoteProtocolError",
    "RequestError",
    "SessionState",
    "Turn",
    "Work",
    "__version__",
    "allow_all",
    "connect",
    "deny_all",
]


def test_all_is_sorted_and_pinned() -> None:
    assert acp2.__all__ == sorted(acp2.__all__)
    assert acp2.__all__ == PINNED


def test_every_public_name_resolves() -> None:
    for name in acp2.__all__:
        assert getattr(acp2, name) is not None


def test_importing_acp2_loads_no_heavy_module() -> None:
    code = (
        "import sys, acp2; heavy = [m for m in ('msgspec', 'anyio', 'rich', 'httpx', "
        "'acp2.schema', 'acp2.agent', 'acp2.client') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_callable_has_a_docstring() -> None:
    import inspect
    import pkgutil

    missing = []
    for info in pkgutil.walk_packages(acp2.__path__, "acp2."):
        if info.name.endswith("__main__") or ".sample_project" in info.name:
            continue
        module = __import__(info.name, fromlist=["_"])
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            is_own = (inspect.isclass(obj) or inspect.isfunction(obj)) and (
                obj.__module__ == info.name
            )
            if is_own and not (obj.__doc__ or "").strip():
                missing.append(f"{info.name}.{name}")
    assert missing == []
