"""``acp2.check`` observes the wire on its own: none of the runtimes' code is in the loop."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import acp2.check

CHECK = Path(acp2.check.__file__).parent

#: What the checker may import from the rest of acp2: data (the method tables and wire
#: vocabularies), messages and errors, the one process-group clean-up, and for
#: ``--url`` the remote byte carriers (WebSocket / HTTP: bytes only, the checker still
#: frames and judges every message itself).
ALLOWED = (
    "acp2.check",
    "acp2.schema",
    "acp2.compat.v1.methods",
    "acp2.compat.v1.schema",
    "acp2.errors",
    "acp2.diagnose",
    "acp2.transport.procgroup",
    "acp2.transport.base",
    "acp2.transport.remote",
)
#: The runtimes' peer, framing and spawning: a bug there must not be on both ends.
FORBIDDEN = ("acp2.rpc", "acp2.agent", "acp2.client", "acp2.transport.stdio")


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_every_acp2_import_in_check_is_data_errors_or_the_shared_clean_up() -> None:
    stray = {
        f"{path.relative_to(CHECK)}: {module}"
        for path in CHECK.rglob("*.py")
        for module in imported_modules(path)
        if within(module, ("acp2",)) and not within(module, ALLOWED)
    }
    assert not stray, sorted(stray)


def test_importing_all_of_check_loads_no_runtime_module() -> None:
    code = (
        "import importlib, pkgutil, sys, acp2.check\n"
        "for info in pkgutil.walk_packages(acp2.check.__path__, 'acp2.check.'):\n"
        "    importlib.import_module(info.name)\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('acp2'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.split()
    assert "acp2.check.probes.jsonrpc" in loaded  # the walk did import the probes
    assert [m for m in loaded if within(m, FORBIDDEN)] == []
