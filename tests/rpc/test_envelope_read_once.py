"""The JSON-RPC envelope is read in rpc/ only (issue 25, item 1).

Every ``.py`` under src/acp2 outside ``rpc/`` and the independent ``check/`` is parsed,
and each of these fails the test (docstrings are skipped, comments are not in the ast):

- a class with an annotated ``jsonrpc`` field, or with ``method`` beside ``id`` or
  ``params``: a decoder of the envelope;
- ``x["method"]`` / ``x["jsonrpc"]`` / ``x.get("method")`` / ``x.get("jsonrpc")``: the
  envelope read out of a decoded frame;
- a str or bytes constant holding ``"jsonrpc"`` or ``"method"`` with its quotes: bytes
  sniffed for the envelope, or an envelope built by hand;
- an import of the rpc layer's frame layout (``SESSION_UPDATE_PREFIX``,
  ``NOTIFICATION_HEAD``, ``notification_prefix``): a module that depends on the byte
  layout of frames instead of asking :mod:`acp2.rpc.update_frames`.

:data:`ALLOWED` names the modules that still do, each with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import acp2

SRC = Path(acp2.__file__).parent
#: The envelope's own home, and the conformance checker (independent of acp2's rpc by design).
EXEMPT = ("rpc/", "check/")
_LAYOUT = frozenset({"SESSION_UPDATE_PREFIX", "NOTIFICATION_HEAD", "notification_prefix"})
_KEYS = frozenset({"method", "jsonrpc"})
_QUOTED = ('"jsonrpc"', '"method"')

#: Modules that still read or build envelopes themselves, and why they may for now.
ALLOWED: dict[str, str] = {
    # Empty since the bridge goes through rpc/ (issue 25): a module that must read or
    # build envelopes itself is named here with its reason.
}

_SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _field_names(node: ast.ClassDef) -> set[str]:
    return {
        item.target.id
        for item in node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }


def _key_of(node: ast.AST) -> str | None:
    """The string key of ``x[key]`` or ``x.get(key, ...)``, else None (``scope[...]``
    is an ASGI scope, whose ``"method"`` is the HTTP method)."""
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "scope":
        return None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key = node.slice.value
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        key = node.args[0].value
    else:
        return None
    return key if isinstance(key, str) else None


def _text(node: ast.Constant) -> str | None:
    value = node.value
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value if isinstance(value, str) else None


def envelope_reads(source: str) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for each place in ``source`` that reads or builds an envelope."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = _field_names(node)
            if "jsonrpc" in fields or ("method" in fields and fields & {"id", "params"}):
                yield node.lineno, f"class {node.name} decodes the envelope"
        elif isinstance(node, ast.Constant) and id(node) not in skip:
            text = _text(node)
            if text is not None and any(q in text for q in _QUOTED):
                yield node.lineno, f"envelope bytes {text[:40]!r}"
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in _LAYOUT:
                    yield node.lineno, f"imports the frame layout {alias.name}"
        key = _key_of(node)
        if key in _KEYS:
            yield node.lineno, f"reads {key!r} out of a decoded frame"


def offenders() -> dict[str, list[tuple[int, str]]]:
    """Every module outside rpc/ and check/ that reads envelopes, with where."""
    found: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(EXEMPT):
            continue
        hits = list(envelope_reads(path.read_text()))
        if hits:
            found[rel] = hits
    return found


def test_no_module_outside_rpc_reads_the_envelope() -> None:
    found = {rel: hits for rel, hits in offenders().items() if rel not in ALLOWED}
    assert not found, "\n".join(
        f"{rel}:{line}: {what}" for rel, hits in found.items() for line, what in hits
    )


def test_the_scan_finds_each_kind_of_envelope_read() -> None:
    source = """
import msgspec
from acp2.rpc.messages import SESSION_UPDATE_PREFIX

class Head(msgspec.Struct):
    id: msgspec.Raw
    method: str | None = None

def sniff(line: bytes, frame: dict) -> bool:
    reply = {"jsonrpc": "2.0", "id": 1}
    return line.startswith(b'{"method"') or frame.get("method") == "x" or frame["jsonrpc"]
"""
    whats = [what for _, what in envelope_reads(source)]
    assert any(w.startswith("class Head") for w in whats)
    assert any("frame layout" in w for w in whats)
    assert any(w.startswith("envelope bytes") for w in whats)
    assert sum(w.startswith("reads") for w in whats) == 2
    assert sum(w.startswith("reads 'jsonrpc'") for w in whats) == 1


def test_a_docstring_may_name_the_envelope() -> None:
    assert not list(envelope_reads('"""Reads {"method": ...} frames."""\nx = 1\n'))
