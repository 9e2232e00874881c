"""Applying ``session/set_config_option`` to a session's options (CO-06, CO-09)."""

from __future__ import annotations

from typing import Any

from acp2.errors import InvalidParams
from acp2.schema import SessionConfigBoolean, SessionConfigSelect, SetSessionConfigOptionRequest

__all__ = ["apply_config_change", "select_values"]


def select_values(option: SessionConfigSelect) -> set[str]:
    """Every value id a select offers, across groups."""
    values: set[str] = set()
    for entry in option.options:
        if entry.is_group:
            values.update(str(o.value) for o in entry.options or [])
        else:
            values.add(str(entry.value))
    return values


def apply_config_change(options: list[Any], params: SetSessionConfigOptionRequest) -> None:
    """Set one option's current value in ``options`` (in place).

    Raises InvalidParams -- changing nothing -- for an unknown ``configId``, a value type
    that does not match the option, or a value the select does not offer.
    """
    for option in options:
        if isinstance(option, SessionConfigSelect) and option.config_id == params.config_id:
            if params.type != "id" or params.value not in select_values(option):
                raise InvalidParams(f"Invalid value for {params.config_id}: {params.value!r}")
            option.current_value = params.value
            return
        if isinstance(option, SessionConfigBoolean) and option.config_id == params.config_id:
            if params.type != "boolean" or not isinstance(params.value, bool):
                raise InvalidParams(f"{params.config_id} takes a boolean value")
            option.current_value = params.value
            return
    raise InvalidParams(f"Unknown config option: {params.config_id}")
