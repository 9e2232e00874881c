"""The agent's session config options as the chat uses them: ``/model``, ``/mode`` and
the model name in the status line.

An option is found by its ``category`` (``model``, ``mode``: a UX hint, CO-*), else by
its ``configId``; only ``select`` options can be chosen from. Choosing sends
``session/set_config_option`` and takes the complete option list of the answer.
"""

from __future__ import annotations

from typing import Any

from acp2.client import ClientSession
from acp2.schema import SessionConfigSelect
from acp2.ui.choose import picked

__all__ = ["categories", "choices", "current_name", "find_select", "pick", "set_select"]


def find_select(options: list[Any], category: str) -> SessionConfigSelect | None:
    """The first select option of ``category`` (or whose id is ``category``)."""
    selects = [o for o in options if isinstance(o, SessionConfigSelect)]
    for option in selects:
        if option.category == category:
            return option
    for option in selects:
        if option.config_id == category:
            return option
    return None


def categories(options: list[Any]) -> set[str]:
    """The categories the chat can offer a command for (``model``, ``mode``)."""
    return {name for name in ("model", "mode") if find_select(options, name) is not None}


def choices(option: SessionConfigSelect) -> list[tuple[str, str]]:
    """``(value id, name)`` of each choice, groups flattened, in order."""
    out: list[tuple[str, str]] = []
    for entry in option.options:
        group = (entry.options or []) if entry.is_group else [entry]
        out.extend((str(choice.value), str(choice.name)) for choice in group)
    return out


def current_name(option: SessionConfigSelect) -> str:
    """The name of the current choice (its id when it is not listed)."""
    for value, name in choices(option):
        if value == option.current_value:
            return name
    return str(option.current_value)


def pick(option: SessionConfigSelect, answer: str) -> str | None:
    """The value id ``answer`` designates: a number of the list, an id, or a name
    (case-insensitive); None when it designates none."""
    answer = answer.strip()
    listed = choices(option)
    index = picked(answer, len(listed))
    if index is not None:
        return listed[index][0]
    for value, name in listed:
        if answer == value or answer.casefold() == name.casefold():
            return value
    return None


async def set_select(session: ClientSession, option: SessionConfigSelect, value: str) -> None:
    """Set ``option`` to ``value`` with ``session/set_config_option``; the answer's option
    list replaces the state's. Raises the agent's ``RequestError`` when refused."""
    await session.set_config_option(option.config_id, value)
