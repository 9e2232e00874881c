"""Methods whose shapes agree translate by re-reading, both ways, valid on both sides."""

from __future__ import annotations

from typing import Any

import pytest
from v1_check import assert_v1, assert_v2
from v1_testdata import METHOD_EXAMPLES, load_v1_schema

import acp2.compat.v1.methods as v1m
from acp2.compat.v1.same_shape import (
    SAME_SHAPE,
    params_from_v1,
    params_to_v1,
    result_from_v1,
    result_to_v1,
)
from acp2.schema.codec import decode, encode
from schema_validation import draft_schema


def _v1_defs(method: str) -> tuple[str, str]:
    named = [n for n, d in load_v1_schema()["$defs"].items() if d.get("x-method") == method]
    params = next(n for n in named if not n.endswith("Response"))
    return params, next((n for n in named if n.endswith("Response")), "")


def _v2_defs(method: str) -> tuple[str, str]:
    spec = draft_schema("aug").methods[method]
    return spec.params, spec.result or ""


@pytest.mark.parametrize("method", sorted(SAME_SHAPE, key=lambda s: s.name), ids=lambda s: s.name)
def test_same_shape_methods_translate_both_ways_and_validate(method: Any) -> None:
    params, result = next((p, r) for m, p, r in METHOD_EXAMPLES if m == method.name)
    v2_method = SAME_SHAPE[method]
    v2_params_def, v2_result_def = _v2_defs(v2_method.name)
    v1_params_def, v1_result_def = _v1_defs(method.name)
    lifted = params_from_v1(method, decode(encode(params), method.params_type))
    assert isinstance(lifted, v2_method.params_type)
    assert_v2(lifted, v2_params_def)
    assert assert_v1(params_to_v1(method, lifted), v1_params_def) == params
    if result is not None:
        v1_result = decode(encode(result), method.result_type)
        v2_result = result_from_v1(method, v1_result)
        assert_v2(v2_result, v2_result_def)
        assert assert_v1(result_to_v1(method, v2_result), v1_result_def) == result


def test_other_methods_are_not_translated_by_re_reading() -> None:
    with pytest.raises(KeyError):
        params_to_v1(v1m.SESSION_PROMPT, {})
    with pytest.raises(KeyError):
        params_from_v1(v1m.SESSION_NEW, {})
