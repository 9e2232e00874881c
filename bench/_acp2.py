"""What the ``acp2_*.py`` hooks share: availability checks, the bench agent's argv, sizes.

Each hook first calls :func:`require` with the acp2 modules it needs; while one of them
does not exist yet (or is only an empty namespace package), the hook prints
``BENCH-SKIP acp2.<module> not available yet`` and exits 0, and ``run.py`` shows n/a.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from _common import emit_skip
from _drivers import size_parser

BENCH_DIR = Path(__file__).resolve().parent
AGENT = BENCH_DIR / "acp2_agent.py"


def missing(*modules: str) -> str | None:
    """Return why the first unavailable module of ``modules`` cannot be used, or None."""
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:
            return f"{name} not available yet"
        if getattr(module, "__file__", None) is None:  # a bare folder: namespace package
            return f"{name} not available yet"
    return None


def require(*modules: str) -> None:
    """Exit the hook with a ``BENCH-SKIP`` line unless every module can be imported."""
    reason = missing(*modules)
    if reason is not None:
        emit_skip(reason)
        raise SystemExit(0)


def agent_argv(store: str) -> list[str]:
    """Return the command that starts the acp2 bench agent with history in ``store``."""
    return [sys.executable, str(AGENT), "--store", store]


def acp2_command() -> str:
    """Return the ``acp2`` console script next to this interpreter (else just ``acp2``)."""
    script = Path(sys.executable).with_name("acp2")
    return str(script) if script.exists() else "acp2"


def size_arguments(description: str | None) -> argparse.ArgumentParser:
    """Return a parser with every size option the hooks take (the same as the SDK drivers)."""
    parser = size_parser(description)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--store",
        default="file",
        choices=["file", "memory"],
        help="agent history in a temporary SQLite file (the default setup) or in memory",
    )
    return parser
