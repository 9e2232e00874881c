"""One in-process harness: no test module serves an agent and connects to it on its own.

``tests/helpers/inprocess.py`` is the one place that starts an agent's ``serve`` in this
process and joins a client (the client runtime, or a raw wire) to it. A module outside
``tests/helpers`` that both serves an agent (``X.serve`` or ``serve_connection``) and makes
the pair or the client for it (``memory_pair``, ``connect_transport``) holds a copy of that
harness; the scan fails on it unless :data:`ALLOWED` says why it must. The scan is per
module, not per function, so a copy split over two functions is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent

#: Module relative to tests/ -> why it joins an agent itself.
ALLOWED = {
    "bridge/test_front.py": "the test of run_front itself joins two pairs around the agent",
    "hostile/test_client_fuzz.py": "its agent is a scripted hostile peer (its own .serve "
    "answers one message), not an agent runtime",
}

_SERVES = {"attr:serve", "serve_connection"}
_JOINS = {"memory_pair", "connect_transport", "attr:memory_pair", "attr:connect_transport"}


def _names(function: ast.AST) -> set[str]:
    """Every name (``x``) and attribute (``attr:x``) the function uses."""
    found: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(f"attr:{node.attr}")
    return found


def harness_copies(root: Path) -> set[str]:
    """Every module under ``root`` (but helpers/) that serves an agent and joins a
    client to it."""
    copies = set()
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root)
        used = _names(ast.parse(path.read_text(), str(path)))
        if module.parts[0] != "helpers" and used & _SERVES and used & _JOINS:
            copies.add(module.as_posix())
    return copies


def test_no_test_module_serves_an_agent_and_joins_a_client_itself() -> None:
    copies = harness_copies(TESTS) - set(ALLOWED)
    assert not copies, (
        "use helpers.inprocess.served / serving instead of serving an agent in: "
        + ", ".join(sorted(copies))
    )


def test_every_allowed_exception_still_exists() -> None:
    """An allow-list entry whose module is gone or no longer joins is removed."""
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
    )
    (tmp_path / "test_y.py").write_text(
        "class Desk:\n"
        "    async def open(self, ours):\n"
        "        tg.start_soon(_serve, self.agent, theirs)\n"
        "        return connect_transport(ours)\n"
        "async def _serve(agent, transport):\n"
        "    await serve_connection(agent, transport)\n"
    )
    (tmp_path / "test_z.py").write_text("def fine(agent):\n    return served(agent)\n")
    assert harness_copies(tmp_path) == {"test_x.py", "test_y.py"}
