"""Every $defs entry of both vendored schemas is modelled, aliased, or deliberately not."""

from __future__ import annotations

import inspect
import subprocess
import sys

import msgspec
import pytest
from schema_testdata import DRAFTS, load_schema

import acp2.schema as schema
from acp2.schema import Model
from acp2.schema.coverage import ALIASES, NOT_MODELLED


def _all_defs() -> list[str]:
    return sorted({name for draft in DRAFTS for name in load_schema(draft)["$defs"]})


def _model_classes() -> list[type[Model]]:
    return [
        obj
        for name in schema.__all__
        if inspect.isclass(obj := getattr(schema, name))
        and issubclass(obj, Model)
        and obj is not Model
    ]


def test_every_schema_definition_of_both_drafts_is_a_class_an_alias_or_not_modelled() -> None:
    missing = []
    for name in _all_defs():
        obj = getattr(schema, name, None)
        is_class = inspect.isclass(obj) and issubclass(obj, Model) and obj.__name__ == name
        if is_class:
            assert name not in ALIASES, name
            assert name not in NOT_MODELLED, name
        elif name in ALIASES:
            assert obj is not None, f"alias {name} is not exported by acp2.schema"
        elif name not in NOT_MODELLED:
            missing.append(name)
    assert missing == []


def test_coverage_lists_name_only_real_definitions_and_do_not_overlap() -> None:
    defs = set(_all_defs())
    assert set(NOT_MODELLED) <= defs
    assert defs >= ALIASES
    assert not (ALIASES & set(NOT_MODELLED))
    assert all(reason.strip() for reason in NOT_MODELLED.values())


def test_both_drafts_together_have_200_definitions() -> None:
    assert len(load_schema("aug")["$defs"]) == 175
    assert len(load_schema("nov")["$defs"]) == 197
    assert len(_all_defs()) == 200


def test_nov_renames_are_aliases_of_the_aug_classes() -> None:
    assert schema.ClientAuthCapabilities is schema.AuthCapabilities
    assert schema.Command is schema.AvailableCommand


@pytest.mark.parametrize("cls", _model_classes(), ids=lambda c: c.__name__)
def test_every_public_model_has_a_one_line_docstring_and_keyword_only_fields(
    cls: type[Model],
) -> None:
    assert cls.__doc__
    assert cls.__doc__.strip()
    fields = msgspec.structs.fields(cls)
    if fields:
        with pytest.raises(TypeError):
            cls("positional")


def test_schema_package_exports_each_public_name_once() -> None:
    assert len(schema.__all__) == len(set(schema.__all__))
    for name in schema.__all__:
        assert hasattr(schema, name), name


def test_importing_the_schema_package_pulls_in_no_io_or_async_modules() -> None:
    code = (
        "import sys, acp2.schema; "
        "bad = [m for m in ('asyncio', 'anyio', 'subprocess', 'socket') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert out == ""
