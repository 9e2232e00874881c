"""The layer list holds for every import in src/acp2, including imports inside functions.

ARCHITECTURE.md and docs/internals.md draw the layers; this test is where they are
enforced. It parses every module under ``src/acp2`` with :mod:`ast` and collects every
``import`` and ``from ... import`` -- at module level, inside functions and methods, in
``try`` blocks -- except those under ``if TYPE_CHECKING:``, which never run and so make
no import-time or run-time dependency (they are how a lower layer may still name a
higher layer's type in an annotation). A string naming a module of acp2 counts as an
import of it (lazy export maps, ``importlib.import_module``), except in the package's
public facade, ``acp2/__init__.py``, which names every part lazily on purpose, and in
``getLogger`` calls (a logger's name). Each import is mapped to its *part* (a package
such as ``agent``, or one of the two halves of ``rpc``) and must then:

(a) leave the graph of parts acyclic, and
(b) go from a higher part to a strictly lower one, per :data:`LAYERS` below, or stay
    inside its own part. Parts on the same level (the two runtimes, say) never import
    each other.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "acp2"

#: The layer list, highest first. A part may import parts on lower levels only. The
#: single-module files at the top of the package (errors, sanitize, _aio, ...) and the
#: package's own ``__init__`` are the bottom level, "base".
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"cli"}),
    frozenset({"serve", "ui", "registry", "testing", "check"}),
    frozenset({"coder"}),
    frozenset({"agent", "client"}),
    frozenset({"bridge"}),
    frozenset({"compat"}),
    frozenset({"store"}),
    frozenset({"rpc.shell"}),
    frozenset({"transport"}),
    # The pure core: no asyncio/anyio/subprocess/socket (checked elsewhere).
    frozenset({"lifecycle"}),
    frozenset({"state"}),
    frozenset({"rpc.core"}),
    frozenset({"schema"}),
    frozenset({"base"}),
)

#: check/ stands apart: an independent observer of the wire, with its own framer. It
#: may read the models and the pure core, and carry bytes over a transport (spawn,
#: stop a process group, open a remote link), never use the runtimes' JSON-RPC peer.
#: Nothing but cli imports it (its level, just below cli, already says so).
CHECK_MAY_IMPORT = frozenset({"schema", "compat", "lifecycle", "state", "transport", "base"})

#: Where a part may reach into a lower one only through named modules: acp2 serve hosts
#: an Agent (its app object, and the runtime for its store) but none of the runtime's
#: internals (what history records is the store's word: ``store.base.NOT_RECORDED``).
NARROW: dict[tuple[str, str], frozenset[str]] = {
    ("serve", "agent"): frozenset({"acp2.agent", "acp2.agent.app", "acp2.agent.runtime"}),
}

#: The asyncio shell of rpc (sits above transport); every other rpc module is sans-IO
#: core, below transport. The package ``__init__`` loads Connection lazily, so it
#: belongs to the shell.
RPC_SHELL = frozenset(
    {"__init__", "connection", "reader", "dispatch", "responder", "outbox", "later"}
)


class Edge(NamedTuple):
    """One import of one module by another: where it is written and what it names."""

    source: str
    target: str
    where: str


def module_name(path: Path) -> str:
    """``src/acp2/agent/app.py`` -> ``acp2.agent.app``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def part_of(module: str) -> str:
    """The layer part a module of acp2 belongs to."""
    pieces = module.split(".")
    if module == "acp2.__main__":
        return "cli"  # ``python -m acp2`` is the command line's entry point
    if len(pieces) == 1 or (f"acp2.{pieces[1]}" in MODULES and not _is_package(pieces[1])):
        return "base"
    if pieces[1] == "rpc":
        leaf = pieces[2] if len(pieces) > 2 else "__init__"
        return "rpc.shell" if leaf in RPC_SHELL else "rpc.core"
    return pieces[1]


def _is_package(name: str) -> bool:
    return (ROOT / name / "__init__.py").exists()


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    drop = node.level - 1 if is_package else node.level
    base = base[: len(base) - drop]
    return ".".join([*base, node.module] if node.module else base)


def _targets(module: str, node: ast.AST, is_package: bool) -> list[str]:
    if isinstance(node, ast.Constant) and node.value in MODULES and module != "acp2":
        # A module named in a string is imported by name: a lazy export map
        # (``_LAZY = {"Name": "acp2.x.y"}``) or ``importlib.import_module("acp2.x")``.
        # The package's own facade (acp2/__init__.py) names every part on purpose.
        return [str(node.value)]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        origin = _resolve(module, node, is_package)
        # ``from acp2.x import y`` imports the module acp2.x.y when y is one.
        named = [f"{origin}.{a.name}" for a in node.names if f"{origin}.{a.name}" in MODULES]
        return named or [origin]
    return []


def _is_type_checking(test: ast.expr) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _is_logger(node: ast.AST) -> bool:
    """``logging.getLogger("acp2.agent")``: a logger's name, not an import."""
    func = getattr(node, "func", None)
    name = getattr(func, "attr", None) or getattr(func, "id", None)
    return isinstance(node, ast.Call) and name == "getLogger"


def _walk(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node``, leaving out the bodies of ``if TYPE_CHECKING:`` and
    the arguments of ``getLogger``."""
    found: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                found += [other, *_walk(other)]
            continue
        if _is_logger(child):
            continue
        found += [child, *_walk(child)]
    return found


def edges() -> list[Edge]:
    """Every import between two modules of acp2, with its file and line."""
    found: list[Edge] = []
    for module, path in sorted(MODULES.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for node in _walk(tree):
            for target in _targets(module, node, is_package):
                if target == "acp2" or target.startswith("acp2."):
                    where = f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}"
                    found.append(Edge(module, target, where))
    return found


def level(part: str) -> int:
    """The part's height in :data:`LAYERS` (0 = bottom)."""
    for height, parts in enumerate(reversed(LAYERS)):
        if part in parts:
            return height
    raise AssertionError(f"part {part!r} is in no layer: add it to LAYERS and the docs")


def allowed(source: str, target: str) -> bool:
    """Whether part ``source`` may import part ``target``."""
    if source == target:
        return True
    if source == "check":
        return target in CHECK_MAY_IMPORT
    return level(source) > level(target)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def part_edges() -> dict[tuple[str, str], list[Edge]]:
    """Imports grouped by (importing part, imported part), self-imports left out."""
    grouped: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in edges():
        pair = (part_of(edge.source), part_of(edge.target))
        if pair[0] != pair[1]:
            grouped[pair].append(edge)
    return grouped


def test_every_part_of_the_package_is_in_the_layer_list() -> None:
    parts = {part_of(m) for m in MODULES}
    for part in parts:
        level(part)
    assert {"agent", "bridge", "client", "serve", "rpc.core", "rpc.shell"} <= parts


def test_the_walk_sees_imports_inside_functions_and_skips_type_checking_blocks() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import acp2.cli\n"
        "def f():\n    import acp2.serve\n"
        "class C:\n    def m(self):\n        from acp2 import ui\n"
        '_LAZY = {"Chat": "acp2.ui.app"}\n'
        'log = logging.getLogger("acp2.check")\n'
    )
    seen = [t for n in _walk(tree) for t in _targets("acp2.x", n, False)]
    assert "acp2.serve" in seen
    assert "acp2.ui" in seen
    assert "acp2.ui.app" in seen
    assert "acp2.cli" not in seen
    assert "acp2.check" not in seen


def test_the_package_import_graph_has_no_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in part_edges():
        graph[source].add(target)
    found = cycles(graph)
    detail = [
        f"{a} -> {b}: {', '.join(e.where for e in edges_[:3])}"
        for (a, b), edges_ in sorted(part_edges().items())
        if any(a in c and b in c for c in found)
    ]
    assert not found, f"package cycles {found}:\n" + "\n".join(detail)


def test_the_graph_of_whole_packages_has_no_cycle_either() -> None:
    # rpc's two halves sit on two levels, but as one package it must not form a loop with
    # transport either (the shell names the Transport protocol in annotations only).
    graph: dict[str, set[str]] = defaultdict(set)
    for (source, target), _ in part_edges().items():
        whole = (source.split(".")[0], target.split(".")[0])
        if whole[0] != whole[1]:
            graph[whole[0]].add(whole[1])
    assert not cycles(graph), f"package cycles {cycles(graph)}"


def test_no_import_goes_up_the_layer_list() -> None:
    bad = [
        f"{a} -> {b}: {edge.where} imports {edge.target}"
        for (a, b), group in sorted(part_edges().items())
        if not allowed(a, b)
        for edge in group
    ]
    assert not bad, "imports against the layer list:\n" + "\n".join(bad)


def test_serve_reaches_the_agent_runtime_only_through_its_app_and_runtime() -> None:
    bad = [
        f"{edge.where} imports {edge.target}"
        for (a, b), allowed_modules in NARROW.items()
        for edge in part_edges().get((a, b), [])
        if edge.target not in allowed_modules
    ]
    assert not bad, "imports past a narrow seam:\n" + "\n".join(bad)
