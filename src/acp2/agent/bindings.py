"""A handler paired with its method table entry, type-checked where the pair is made."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from acp2.schema.methods import MethodSpec

__all__ = ["Binding", "bind"]

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Binding:
    """One entry of a runtime's handler table: ``connection.on(spec, handler)``."""

    spec: MethodSpec[Any, Any]
    handler: Callable[[Any], Awaitable[Any]]


def bind(spec: MethodSpec[P, R], handler: Callable[[P], Awaitable[R]]) -> Binding:
    """Pair ``handler`` with ``spec``: the handler takes the spec's params type and returns
    its result type (checked by mypy here; the binding itself is untyped)."""
    return Binding(spec, handler)
