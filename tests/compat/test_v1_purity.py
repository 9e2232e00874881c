"""The v1 translation is pure: no IO or event-loop module, directly or on import."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import acp2.compat.v1
from helpers.timeouts import RUN_TIMEOUT

FORBIDDEN = ("anyio", "asyncio", "subprocess", "socket")
MODULES = (
    "negotiate",
    "convert",
    "handshake",
    "project",
    "project_tools",
    "agent_side",
    "lift",
    "client_side",
    "methods",
    "same_shape",
)
SRC = Path(acp2.compat.v1.__file__).resolve().parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("name", MODULES)
def test_translation_modules_do_not_import_io_modules_directly(name: str) -> None:
    assert not _imported_roots(SRC / f"{name}.py") & set(FORBIDDEN)


def test_importing_the_translation_loads_no_io_module() -> None:
    imports = ", ".join(f"acp2.compat.v1.{name}" for name in MODULES)
    code = (
        "import json, sys\n"
        f"import {imports}\n"
        f"print(json.dumps(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=RUN_TIMEOUT,
    )
    assert json.loads(out.stdout) == []
