"""The shape of the agent runtime: no import cycle, no wire method name outside the method
table, no runtime state in the Agent configuration object."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import acp2.agent
from acp2.agent import Agent
from acp2.schema.methods import METHODS

AGENT = Path(acp2.agent.__file__).parent
MODULES = sorted(p for p in AGENT.glob("*.py") if p.name != "__init__.py")
# emitter.py writes the session/update envelope prefix as bytes, for speed (its constant is
# another change's); every other module names methods through the table.
TABLE_USERS = [p for p in MODULES if p.name != "emitter.py"]


def _imports(path: Path, *, typing: bool = False) -> set[str]:
    """The acp2.agent modules ``path`` imports at run time (module level or inside a
    function), and with ``typing`` also those under ``if TYPE_CHECKING:``."""
    names = {p.stem for p in MODULES}
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        type_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        if type_only and not typing:
            return
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "acp2.agent":
                found.update(a.name for a in node.names if a.name in names)
            elif node.module.startswith("acp2.agent."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(
                a.name.split(".")[2]
                for a in node.names
                if a.name.count(".") >= 2 and a.name.startswith("acp2.agent.")
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` (a path that comes back to its start), or None."""
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for dep in sorted(graph.get(node, ())):
            found = walk(dep, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = walk(start, [])
        if found:
            return found
    return None


def test_the_agent_modules_import_each_other_without_a_cycle() -> None:
    graph = {p.stem: _imports(p) for p in MODULES}
    assert _cycle(graph) is None


#: The public types that name each other: ``Turn.session`` is an AgentSession, whose
#: ``start_work`` takes a handler of a Turn (the context carries the session to the turn).
MUTUAL = {"session", "turn", "context"}


def test_only_the_session_and_turn_types_refer_to_each_other() -> None:
    graph = {p.stem: _imports(p, typing=True) for p in MODULES}
    assert _cycle(graph) is not None  # the mutual reference below, and only that:
    for name in MUTUAL:
        graph[name] -= MUTUAL
    assert _cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def _strings(path: Path) -> set[str]:
    """The string constants of ``path`` that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


@pytest.mark.parametrize("path", TABLE_USERS, ids=lambda p: p.name)
def test_no_wire_method_name_is_written_outside_the_method_table(path: Path) -> None:
    assert not _strings(path) & set(METHODS)


def test_the_agent_configuration_holds_no_runtime_state() -> None:
    agent = Agent("a", store=":memory:")
    agent.history()
    agent.session_data("sess_1")["k"] = 1
    assert set(vars(agent)) == {f.name for f in dataclasses.fields(Agent)}
    assert all(not f.name.startswith("_") for f in dataclasses.fields(Agent))
    assert agent.session_data("sess_1") == {"k": 1}


def test_two_agents_configured_alike_keep_their_own_state() -> None:
    first, second = Agent("a", store=":memory:"), Agent("a", store=":memory:")
    first.session_data("sess_1")["k"] = 1
    assert first != second
    assert second.session_data("sess_1") == {}
    assert first.history() is not second.history()
