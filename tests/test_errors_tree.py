"""The one exception tree: every error acp2 raises on purpose is an ``Acp2Error``."""

from __future__ import annotations

import inspect

import pytest

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
    ],
)
def test_errors_that_used_to_be_builtin_subclasses_still_are(cls: type, also: type) -> None:
    assert issubclass(cls, also)
    assert issubclass(cls, Acp2Error)


def test_the_01_name_of_the_start_error_is_the_same_class() -> None:
    assert AgentNotStarted is errors.AgentStartError


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
