"""Wire method names are written in the method tables only (one table per protocol).

Every ``.py`` under src/acp2 is parsed; a string constant equal to a v2 or v1 wire
method name outside ``schema/methods.py``, ``schema/extensions.py`` (acp2's own ``_``
methods) and ``compat/v1/methods.py`` fails the test. Docstrings
may mention names (the first statement of a module, class or function is skipped), and
so may comments (the ast has none).

Handlers are registered from the tables too: outside ``rpc/`` no code calls a
registration method (``.on``, ``.on_request``, ``.on_notification``) itself; the runtimes
hand their handlers to :func:`acp2.rpc.handlers.register`, which checks them against the
table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import acp2
from acp2.compat.v1.methods import METHODS as V1_METHODS
from acp2.schema.extensions import EXTENSIONS
from acp2.schema.methods import METHODS

SRC = Path(acp2.__file__).parent
NAMES = frozenset(METHODS) | frozenset(V1_METHODS) | frozenset(EXTENSIONS)
#: Where the names are written: the v2 table, acp2's extension table and the v1 table.
TABLES = ("schema/methods.py", "schema/extensions.py", "compat/v1/methods.py")

_SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def exported(tree: ast.AST) -> set[int]:
    """The ids of the string constants listed in ``__all__`` (Python names, not wire names:
    ``acp2.client.startup`` exports a function called ``initialize``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            found |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return found


def wire_names(source: str) -> Iterator[tuple[int, str]]:
    """``(line, name)`` for each string constant in ``source`` that is a wire method name
    and not a docstring."""
    tree = ast.parse(source)
    skip = docstrings(tree) | exported(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in NAMES
            and id(node) not in skip
        ):
            yield node.lineno, node.value


def offenders(exempt: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(exempt):
            continue
        found += [f"src/acp2/{rel}:{line}: {name!r}" for line, name in wire_names(path.read_text())]
    return found


def test_no_wire_method_name_is_written_outside_the_method_tables() -> None:
    found = offenders(TABLES)
    assert not found, "use the table's constant (e.g. SESSION_PROMPT.name):\n" + "\n".join(found)


def test_the_scan_finds_a_name_in_code_but_not_in_docstrings_or_longer_strings() -> None:
    source = '''
"""Module docs may say session/prompt."""
def f():
    """So may "session/prompt" in a function's."""
    send("session/prompt", {"note": "session/prompt is sent"})
    return {"method": "initialize"}
'''
    assert list(wire_names(source)) == [(5, "session/prompt"), (6, "initialize")]


def test_both_tables_contribute_names() -> None:
    assert "session/prompt" in NAMES  # v2 (and v1)
    assert "session/load" in NAMES - METHODS.keys()  # v1 only
    assert "auth/login" in NAMES - V1_METHODS.keys()  # v2 only
    assert "_acp2/session/attach" in NAMES - METHODS.keys()  # acp2's extension


#: The registration methods of a connection (and of the bridge's in-process end).
REGISTERING = frozenset({"on", "on_request", "on_notification"})


def registrations(source: str) -> Iterator[tuple[int, str]]:
    """``(line, method)`` for each call of a registration method in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in REGISTERING
        ):
            yield node.lineno, node.func.attr


def test_no_handler_is_registered_outside_the_table_driven_registration() -> None:
    found = [
        f"src/acp2/{path.relative_to(SRC).as_posix()}:{line}: .{name}(...)"
        for path in sorted(SRC.rglob("*.py"))
        if not path.relative_to(SRC).as_posix().startswith("rpc/")
        for line, name in registrations(path.read_text())
    ]
    assert not found, "register handlers with acp2.rpc.handlers.register:\n" + "\n".join(found)


def test_the_registration_scan_finds_calls_not_definitions() -> None:
    source = """
def on(spec, handler): ...
conn.on(SESSION_PROMPT, handle)
conn.on_notification(SESSION_UPDATE.name, T, h, raw=True)
"""
    assert list(registrations(source)) == [(3, "on"), (4, "on_notification")]
