"""The client runtime's shape (issue 11): objects talk through their interfaces only, and
every wire method name comes from the method table."""

from __future__ import annotations

import ast
from pathlib import Path

import acp2
from acp2.compat.v1.methods import METHODS as V1_METHODS
from acp2.schema.methods import METHODS

SRC = Path(acp2.__file__).parent
WIRE_NAMES = set(METHODS) | set(V1_METHODS)


def _modules(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (SRC / package).rglob("*.py"))


def _private_reaches(tree: ast.AST) -> list[str]:
    """``other._name`` where ``other`` is not ``self`` / ``cls`` (dunders allowed)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") or (
            isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        ):
            continue
        found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _wire_names(tree: ast.AST) -> list[str]:
    """String constants that are a wire method name (``__all__`` entries aside)."""
    exported = {
        id(element)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for element in ast.walk(node.value)
    }
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in WIRE_NAMES
        and id(node) not in exported
    ]


def test_no_client_module_reaches_into_another_objects_private_attributes() -> None:
    found = {
        path.name: hits
        for path in _modules("client")
        if (hits := _private_reaches(ast.parse(path.read_text())))
    }
    assert found == {}


def test_the_check_sees_a_private_reach_and_allows_self() -> None:
    tree = ast.parse("self._ok()\nsession._receive(update)\nself.link._state = 1\n")
    assert sorted(_private_reaches(tree)) == ["2: session._receive", "3: self.link._state"]


def test_no_wire_method_name_is_written_in_the_client_the_ui_or_the_cli() -> None:
    found = {
        str(path.relative_to(SRC)): hits
        for path in _modules("client", "ui", "cli")
        if (hits := _wire_names(ast.parse(path.read_text())))
    }
    assert found == {}


def test_the_check_sees_a_wire_name_but_not_an_exported_function_name() -> None:
    tree = ast.parse('__all__ = ["initialize"]\ncall("session/prompt")\n')
    assert _wire_names(tree) == ["2: 'session/prompt'"]
