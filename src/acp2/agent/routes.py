"""A handler paired with its method table entry, type-checked where the pair is made."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from acp2.schema.methods import MethodSpec

__all__ = ["Route", "route"]

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Route:
    """One entry of a runtime's handler table: ``connection.on(spec, handler)``."""

    spec: MethodSpec[Any, Any]
    handler: Callable[[Any], Awaitable[Any]]


def route(spec: MethodSpec[P, R], handler: Callable[[P], Awaitable[R]]) -> Route:
    """Pair ``handler`` with ``spec``: the handler takes the spec's params type and returns
    its result type (checked by mypy here; the route itself is untyped)."""
    return Route(spec, handler)
