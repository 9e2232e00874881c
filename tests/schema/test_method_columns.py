"""The method tables' session columns agree with the params types, and serve reads them.

``session_param`` is set exactly on the methods whose params type has a ``sessionId``
field (v2, acp2's extensions, v1); ``joins_session`` marks the requests that attach a
connection to a session. Serve's stream bookkeeping and routing take their method sets
from these columns, not from lists of their own.
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec
import pytest

import acp2.serve.cursor as cursor
import acp2.serve.routing as routing
from acp2.compat.v1.methods import METHODS as V1_METHODS
from acp2.compat.v1.methods import SESSION_LOAD
from acp2.schema.extensions import EXTENSIONS
from acp2.schema.methods import METHODS, SESSION_PARAM, MethodSpec

TABLES = {"v2": METHODS, "extensions": EXTENSIONS, "v1": V1_METHODS}
ROWS = [
    pytest.param(spec, id=f"{table}:{name}")
    for table, rows in TABLES.items()
    for name, spec in rows.items()
]


def field_names(params_type: Any) -> set[str]:
    """The wire names of the fields of ``params_type`` (of every struct of a union)."""
    found: set[str] = set()
    for member in typing.get_args(params_type) or (params_type,):
        if isinstance(member, type) and issubclass(member, msgspec.Struct):
            found |= {field.encode_name for field in msgspec.structs.fields(member)}
    return found


@pytest.mark.parametrize("spec", ROWS)
def test_session_param_is_set_exactly_where_the_params_name_a_session(
    spec: MethodSpec[Any, Any],
) -> None:
    names_a_session = SESSION_PARAM in field_names(spec.params_type)
    assert spec.session_param == (SESSION_PARAM if names_a_session else None)


def test_joining_methods_are_the_session_opening_requests_of_each_table() -> None:
    joins = {
        (table, name)
        for table, rows in TABLES.items()
        for name, spec in rows.items()
        if spec.joins_session
    }
    assert joins == {
        ("v2", "session/new"),
        ("v2", "session/resume"),
        ("extensions", "_acp2/session/attach"),
        ("v1", "session/new"),
        ("v1", "session/load"),
        ("v1", "session/resume"),
    }
    for table, name in joins:
        assert TABLES[table][name].kind == "request"


def test_serve_takes_its_session_joining_methods_from_the_tables() -> None:
    from_tables = {
        spec.name for rows in TABLES.values() for spec in rows.values() if spec.joins_session
    }
    assert from_tables == cursor._JOINS
    assert SESSION_LOAD.name == routing._LOAD
