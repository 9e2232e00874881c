"""The methods whose params and results have the same shape in v1 and v2.

For these, translation is a re-read with the other version's models (renames, if any,
are only in the method name): v1 ``authenticate`` / ``logout`` are v2 ``auth/login`` /
``auth/logout``; ``session/list``, ``session/close``, ``session/delete`` and
``session/cancel`` keep their names. :data:`SAME_SHAPE` maps each v1 method to its v2
method; the functions translate either way by the v1 method.
"""

from __future__ import annotations

from typing import Any, Final

import acp2.compat.v1.methods as v1m
import acp2.schema.methods as v2m
from acp2.compat.v1.convert import recode
from acp2.schema.methods import MethodSpec

__all__ = ["SAME_SHAPE", "params_from_v1", "params_to_v1", "result_from_v1", "result_to_v1"]

#: v1 method -> v2 method, for the methods translated by re-reading alone.
SAME_SHAPE: Final[dict[MethodSpec[Any, Any], MethodSpec[Any, Any]]] = {
    v1m.AUTHENTICATE: v2m.AUTH_LOGIN,
    v1m.LOGOUT: v2m.AUTH_LOGOUT,
    v1m.SESSION_LIST: v2m.SESSION_LIST,
    v1m.SESSION_CLOSE: v2m.SESSION_CLOSE,
    v1m.SESSION_DELETE: v2m.SESSION_DELETE,
    v1m.SESSION_CANCEL: v2m.SESSION_CANCEL,
}


def params_from_v1(method: MethodSpec[Any, Any], params: Any) -> Any:
    """v1 ``method`` params as the params of its v2 method. ``KeyError`` for a method not
    in :data:`SAME_SHAPE`."""
    return recode(params, SAME_SHAPE[method].params_type)


def params_to_v1(method: MethodSpec[Any, Any], params: Any) -> Any:
    """v2 params of v1 ``method``'s v2 counterpart, as v1 ``method`` params."""
    return recode(params, _listed(method).params_type)


def result_from_v1(method: MethodSpec[Any, Any], result: Any) -> Any:
    """A v1 ``method`` result as the result of its v2 method."""
    return recode(result, SAME_SHAPE[method].result_type)


def result_to_v1(method: MethodSpec[Any, Any], result: Any) -> Any:
    """A v2 result of v1 ``method``'s v2 counterpart, as the v1 ``method`` result."""
    return recode(result, _listed(method).result_type)


def _listed(method: MethodSpec[Any, Any]) -> MethodSpec[Any, Any]:
    # Only the listed methods translate by re-reading; the others need their own rules.
    if method not in SAME_SHAPE:
        raise KeyError(method.name)
    return method
