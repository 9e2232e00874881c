"""The one exception tree: every error acp2 raises on purpose is an ``Acp2Error``."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import acp2
import acp2.errors as errors
from acp2.client import AgentNotStarted
from acp2.errors import Acp2Error


def test_every_class_in_errors_is_in_the_tree_and_drawn_in_its_docstring() -> None:
    doc = errors.__doc__ or ""
    classes = [obj for _, obj in inspect.getmembers(errors, inspect.isclass)]
    ours = [c for c in classes if c.__module__ == errors.__name__]
    assert all(issubclass(c, Acp2Error) for c in ours)
    missing = [c.__name__ for c in ours if c is not Acp2Error and c.__name__ not in doc]
    assert missing == []


@pytest.mark.parametrize(
    ("cls", "also"),
    [
        (errors.AgentStartError, OSError),
        (errors.HistoryWriteError, RuntimeError),
        (errors.MissingJsonschema, RuntimeError),
        (errors.AgentClosed, errors.ConnectionClosed),
        (errors.RemoteRefused, ConnectionError),
        (errors.BeneathError, OSError),
        (errors.AgentStrayOutput, TimeoutError),
        (errors.NegotiationError, ValueError),
        (errors.DurableFrameError, ValueError),
        (errors.SseError, ValueError),
        (errors.FormFieldError, ValueError),
        (errors.FormUnfillable, ValueError),
    ],
)
def test_errors_that_used_to_be_builtin_subclasses_still_are(cls: type, also: type) -> None:
    assert issubclass(cls, also)
    assert issubclass(cls, Acp2Error)


def test_the_01_name_of_the_start_error_is_the_same_class() -> None:
    assert AgentNotStarted is errors.AgentStartError


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("acp2.client", "AgentExited", "AgentExited"),
        ("acp2.client", "AgentStrayOutput", "AgentStrayOutput"),
        ("acp2.agent", "ElicitationUnsupported", "ElicitationUnsupported"),
        ("acp2.agent", "ElicitationContentError", "ElicitationContentError"),
        ("acp2.coder.tools", "SandboxError", "SandboxError"),
        ("acp2.beneath", "BeneathError", "BeneathError"),
        ("acp2.coder.tools.stopping", "StoppedError", "StoppedError"),
        ("acp2.transport.remote_base", "RemoteRefused", "RemoteRefused"),
        ("acp2.transport.remote_base", "ResumeRefused", "ResumeRefused"),
        ("acp2.transport.durable", "FrameError", "DurableFrameError"),
        ("acp2.transport.sse", "SseError", "SseError"),
        ("acp2.check.probes.base", "Abort", "ProbeAborted"),
        ("acp2.bridge.runner", "BadAnswer", "BadInitializeAnswer"),
        ("acp2.bridge.back_fs", "WriteRefused", "WriteRefused"),
        ("acp2.compat.v1.negotiate", "NegotiationError", "NegotiationError"),
        ("acp2.compat.v1.agent_side", "PromptFailed", "PromptFailed"),
        ("acp2.compat.v1.client_side", "InvalidParams", "InvalidParams"),
        ("acp2.serve.takeover_plan", "Unrestorable", "Unrestorable"),
        ("acp2.ui.form", "FieldError", "FormFieldError"),
        ("acp2.ui.form", "Unfillable", "FormUnfillable"),
    ],
)
def test_the_old_public_names_are_the_tree_classes(module: str, old: str, new: str) -> None:
    # Code written against the old homes keeps catching the same class.
    assert getattr(importlib.import_module(module), old) is getattr(errors, new)


def test_modules_that_raise_these_errors_reexport_the_tree_classes() -> None:
    from acp2.check.runner import CheckError
    from acp2.check.spawn import AgentStartError
    from acp2.check.validator import MissingJsonschema
    from acp2.coder.providers.base import ModelError
    from acp2.coder.tools.errors import ToolError

    assert (CheckError, AgentStartError, MissingJsonschema, ModelError, ToolError) == (
        errors.CheckError,
        errors.AgentStartError,
        errors.MissingJsonschema,
        errors.ModelError,
        errors.ToolError,
    )


def _every_module() -> list[ModuleType]:
    """Every module of acp2 but ``__main__`` (importing it would run the CLI)."""
    names = [info.name for info in pkgutil.walk_packages(acp2.__path__, "acp2.")]
    return [importlib.import_module(name) for name in names if not name.endswith("__main__")]


def _exception_classes(module: ModuleType) -> list[type[BaseException]]:
    found = [obj for obj in vars(module).values() if inspect.isclass(obj)]
    return [c for c in found if issubclass(c, BaseException) and c.__module__ == module.__name__]


def test_no_public_exception_class_is_defined_outside_errors_py() -> None:
    # A caller can catch only what it can find: every public exception is in the one tree.
    # A class whose name starts with "_" is private control flow that never leaves its
    # module (e.g. a retry signal).
    strays = [
        f"{cls.__module__}.{cls.__name__}"
        for module in _every_module()
        if module.__name__ != errors.__name__
        for cls in _exception_classes(module)
        if not cls.__name__.startswith("_")
    ]
    assert strays == []


#: Files that may name or build ``-32603`` outside the one place, and why.
_MAY_MAKE_INTERNAL_ERRORS = {
    # The one place: InternalError owns the code, internal_error() makes every answer.
    "errors.py",
    # The table of the standard JSON-RPC codes names -32603; no answer is built from it.
    "schema/jsonrpc.py",
    # Makes up a reply for a request lost with a remote link: a transport acting as a
    # peer, which issue 25 item 1 moves out of transport/ (being rewritten there).
    "transport/rejoin.py",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of string statements (docstrings and the like): prose, not code."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _makes_internal_error(node: ast.AST, prose: set[int]) -> bool:
    """True when ``node`` writes the -32603 code, its name, its wording or its class."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and node.operand.value == 32603
    if isinstance(node, ast.Constant):
        text = node.value
        if isinstance(text, str) and id(node) not in prose:
            return "internal error" in text.lower()
        return text == -32603
    if isinstance(node, ast.Name | ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) == "INTERNAL_ERROR"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        func = node.func
        return (func.id if isinstance(func, ast.Name) else func.attr) == "InternalError"
    return False


def test_internal_errors_are_made_in_one_place() -> None:
    # A handler's unexpected failure, a bridge that cannot pass a request on, a transport
    # answering locally: every -32603 goes through acp2.errors.internal_error().
    root = Path(acp2.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name in _MAY_MAKE_INTERNAL_ERRORS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _docstrings(tree)
        found += [
            f"{name}:{node.lineno}" for node in ast.walk(tree) if _makes_internal_error(node, prose)
        ]
    assert found == []


def test_internal_error_summarizes_an_exception_and_keeps_a_message() -> None:
    made = errors.internal_error(RuntimeError("x\nsecond line"))
    assert (made.code, made.message) == (-32603, "Internal error: RuntimeError: x")
    assert len(errors.internal_error(ValueError("y" * 500)).message) == 200
    assert errors.internal_error("acp2 bridge: gone").message == "acp2 bridge: gone"
