"""Lazy package exports (PEP 562), the one way: a package lists its public names with the
module that defines each, and a name is imported on first use, then cached in the
package's namespace. ``import acp2``, ``acp2.agent`` or ``acp2.client`` thus costs almost
nothing until a name is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, table: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps each public name to
    the module defining it; a resolved name is stored in ``namespace`` (the package's
    ``globals()``) so it is looked up only once. An unknown name raises
    ``AttributeError`` as a plain module attribute would; ``__dir__`` lists the public
    names, sorted."""
    names = sorted(table)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__
