"""A session's config options: asked of the Agent once, changed by
``session/set_config_option`` (CO-06, CO-09), kept in the runtime's shared state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp2.errors import InvalidParams
from acp2.schema import (
    SessionConfigBoolean,
    SessionConfigOption,
    SessionConfigSelect,
    SetSessionConfigOptionRequest,
)

if TYPE_CHECKING:
    from acp2.agent.session import AgentSession
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["apply_config_change", "current_options", "select_values", "set_option"]


def current_options(agent: Agent, session: AgentSession) -> list[SessionConfigOption] | None:
    """A copy of the session's option list (None when the agent has none): asked of
    ``Agent.config_options`` once per session id, then kept in ``session.shared`` -- never
    in the author's ``session.data``."""
    if agent.config_options is None:
        return None
    shared = session.shared
    if shared.config_options is None:
        shared.config_options = agent.config_options(session)
    return list(shared.config_options)


def set_option(
    agent: Agent, session: AgentSession, params: SetSessionConfigOptionRequest
) -> list[SessionConfigOption]:
    """Apply one change and keep the result; returns the complete current list. Raises
    InvalidParams (changing nothing) when the session has no options or the change does
    not fit (:func:`apply_config_change`)."""
    options = current_options(agent, session)
    if not options:
        raise InvalidParams("This session has no config options")
    apply_config_change(options, params)
    session.shared.config_options = options
    return options


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
