"""The pure core imports no IO or event-loop module (ARCHITECTURE: sans-IO core)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import acp2
from helpers import timeouts

FORBIDDEN = ("anyio", "asyncio", "subprocess", "socket")
PURE_PACKAGES = ("state", "lifecycle")
SRC = Path(acp2.__file__).resolve().parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize(
    "path",
    [p for pkg in PURE_PACKAGES for p in sorted((SRC / pkg).rglob("*.py"))],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_pure_modules_do_not_import_io_modules_directly(path: Path) -> None:
    assert not _imported_roots(path) & set(FORBIDDEN)


def test_importing_the_pure_packages_loads_no_io_module() -> None:
    code = (
        "import json, sys\n"
        "import acp2.state, acp2.lifecycle\n"
        f"print(json.dumps(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    assert json.loads(out.stdout) == []
