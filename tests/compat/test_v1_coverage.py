"""Every $defs entry of the vendored v1 schema is modelled, aliased, or deliberately not."""

from __future__ import annotations

import inspect
import subprocess
import sys

import msgspec
import pytest
from v1_testdata import load_v1_meta, load_v1_schema

import acp2.compat.v1.schema as v1
from acp2.compat.v1.methods import METHODS
from acp2.compat.v1.schema.coverage import ALIASES, NOT_MODELLED
from acp2.schema import Model


def _defs() -> list[str]:
    return sorted(load_v1_schema()["$defs"])


def _model_classes() -> list[type[Model]]:
    return [
        obj
        for name in v1.__all__
        if inspect.isclass(obj := getattr(v1, name)) and issubclass(obj, Model)
    ]


def test_every_v1_schema_definition_is_a_class_an_alias_or_not_modelled() -> None:
    missing = []
    for name in _defs():
        obj = getattr(v1, name, None)
        if inspect.isclass(obj) and issubclass(obj, Model) and obj.__name__ == name:
            assert name not in ALIASES | set(NOT_MODELLED), name
        elif name in ALIASES:
            assert obj is not None, f"alias {name} is not exported by acp2.compat.v1.schema"
        elif name not in NOT_MODELLED:
            missing.append(name)
    assert missing == []


def test_v1_coverage_lists_name_only_real_definitions_and_do_not_overlap() -> None:
    defs = set(_defs())
    assert set(NOT_MODELLED) <= defs
    assert defs >= ALIASES
    assert not (ALIASES & set(NOT_MODELLED))
    assert all(reason.strip() for reason in NOT_MODELLED.values())


def test_vendored_v1_schema_has_170_definitions() -> None:
    assert len(_defs()) == 170


@pytest.mark.parametrize("cls", _model_classes(), ids=lambda c: c.__name__)
def test_every_v1_model_has_a_docstring_and_keyword_only_fields(cls: type[Model]) -> None:
    assert cls.__doc__
    assert cls.__doc__.strip()
    if msgspec.structs.fields(cls):
        with pytest.raises(TypeError):
            cls("positional")


def test_v1_schema_package_exports_each_public_name_once() -> None:
    assert len(v1.__all__) == len(set(v1.__all__))
    for name in v1.__all__:
        assert hasattr(v1, name), name


def test_v1_method_table_names_every_method_of_meta_json_with_its_direction() -> None:
    meta = load_v1_meta()
    by_client = set(meta["agentMethods"].values())
    by_agent = set(meta["clientMethods"].values())
    either = set(meta["protocolMethods"].values())
    assert set(METHODS) == by_client | by_agent | either
    for name, spec in METHODS.items():
        expected = "client" if name in by_client else "agent" if name in by_agent else "either"
        assert spec.sender == expected, name
        assert spec.name == name


def test_v1_method_table_kinds_match_the_schema_x_method_definitions() -> None:
    defs = load_v1_schema()["$defs"]
    with_result = {
        d["x-method"] for n, d in defs.items() if "x-method" in d and n.endswith("Response")
    }
    for name, spec in METHODS.items():
        assert (spec.kind == "request") == (name in with_result), name


def test_importing_acp2_does_not_import_compat() -> None:
    code = "import sys, acp2; print(any(m.startswith('acp2.compat') for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert out == "False"
