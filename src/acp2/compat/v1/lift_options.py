"""The config option list a v1 agent is shown through, for :class:`acp2.compat.v1.lift.V1Lifter`.

``configId`` names an option in ``session/set_config_option``, so the ids in one list are
unique. A v1 agent may send session ``modes`` *and* a config option with id ``mode``
(claude-agent-acp 0.23.1 does): then the agent's own option is the mode option and no
second one is synthesized from ``modes``; setting it is the agent's
``session/set_config_option``, and a ``current_mode_update`` moves its current value.
An agent's list that repeats an id keeps the first option of that id; the rest are
counted as ``config_option.duplicate``. Pure functions.
"""

from __future__ import annotations

from typing import Any

import msgspec

import acp2.schema as v2
from acp2.compat.v1.convert import Drops

__all__ = ["has_option", "unique_options", "with_current_value"]


def _config_id(option: Any) -> str | None:
    """A typed option's id (an unknown, raw option is not read: it is kept as sent)."""
    config_id = getattr(option, "config_id", None)
    return config_id if isinstance(config_id, str) else None


def unique_options(options: list[Any], dropped: Drops) -> list[Any]:
    """``options`` with every option whose id an earlier one has left out (counted)."""
    seen: set[str] = set()
    out = []
    for option in options:
        config_id = _config_id(option)
        if config_id is not None and config_id in seen:
            dropped["config_option.duplicate"] += 1
            continue
        if config_id is not None:
            seen.add(config_id)
        out.append(option)
    return out


def has_option(options: list[Any], config_id: str) -> bool:
    """Whether ``options`` hold a typed option named ``config_id``."""
    return any(_config_id(option) == config_id for option in options)


def with_current_value(options: list[Any], config_id: str, value: str) -> list[Any]:
    """``options`` with the select ``config_id`` set to ``value`` when ``value`` is one of
    its choices (a value it does not offer leaves it as it is)."""
    return [
        msgspec.structs.replace(option, current_value=value)
        if isinstance(option, v2.SessionConfigSelect)
        and option.config_id == config_id
        and value in _values(option)
        else option
        for option in options
    ]


def _values(select: v2.SessionConfigSelect) -> set[str]:
    values = set()
    for choice in select.options:
        for item in choice.options if choice.is_group and choice.options else [choice]:
            if isinstance(item.value, str):
                values.add(item.value)
    return values
