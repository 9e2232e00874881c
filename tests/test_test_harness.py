"""One in-process harness: no test module serves an agent and connects to it on its own.

``tests/helpers/inprocess.py`` is the one place that starts an agent's ``serve`` in this
process and joins a client (the client runtime, or a raw wire) to it. A function outside
``tests/helpers`` that both serves an agent (``X.serve`` or ``serve_connection``) and makes
the pair or the client for it (``memory_pair``, ``connect_transport``) is a copy of that
harness; the scan fails on it unless :data:`ALLOWED` says why it must be.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).parent

#: (module relative to tests/, function) -> why it joins an agent itself.
ALLOWED = {
    (
        "bridge/test_front.py",
        "test_run_front_joins_two_transports_and_returns_what_v1_could_not_carry",
    ): "the test of run_front itself: joining two pairs around the agent is what it checks",
}

#: ``agent.serve`` is an attribute; ``serve_connection`` a function name.
_SERVES = {"attr:serve", "serve_connection"}
_JOINS = {"memory_pair", "connect_transport", "attr:memory_pair", "attr:connect_transport"}


def _outer_functions(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods; nested functions count as their outer one's."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        elif isinstance(child, ast.ClassDef):
            yield from _outer_functions(child)


def _names(function: ast.AST) -> set[str]:
    """Every name (``x``) and attribute (``attr:x``) the function uses."""
    found: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(f"attr:{node.attr}")
    return found


def harness_copies(root: Path) -> set[tuple[str, str]]:
    """(module, function) of every function under ``root`` (but helpers/) that serves an
    agent and joins a client to it."""
    copies = set()
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root)
        if module.parts[0] == "helpers":
            continue
        for function in _outer_functions(ast.parse(path.read_text(), str(path))):
            used = _names(function)
            if used & _SERVES and used & _JOINS:
                copies.add((module.as_posix(), function.name))
    return copies


def test_no_test_module_serves_an_agent_and_joins_a_client_itself() -> None:
    copies = harness_copies(TESTS) - set(ALLOWED)
    assert not copies, (
        "use helpers.inprocess.served / serving instead of serving an agent here: "
        + ", ".join(f"{module}::{name}" for module, name in sorted(copies))
    )


def test_every_allowed_exception_still_exists() -> None:
    """An allow-list entry whose function is gone or no longer joins is removed."""
    assert set(ALLOWED) <= harness_copies(TESTS)


def test_the_scan_finds_a_copy_written_the_usual_ways(tmp_path: Path) -> None:
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "inprocess.py").write_text(
        "async def served(agent):\n    agent.serve(memory_pair()[1])\n"
    )
    (tmp_path / "test_x.py").write_text(
        "async def copy(agent):\n"
        "    ours, theirs = memory_pair()\n"
        "    async def run():\n"
        "        await agent.serve(theirs)\n"
        "    async with connect_transport(ours) as client:\n"
        "        yield client\n"
        "class Desk:\n"
        "    async def open(self):\n"
        "        tg.start_soon(self.agent.serve, theirs)\n"
        "        return connect_transport(ours)\n"
        "def fine(agent):\n"
        "    return served(agent)\n"
    )
    assert harness_copies(tmp_path) == {("test_x.py", "copy"), ("test_x.py", "open")}
