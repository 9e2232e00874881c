"""Helpers for the schema tests: the vendored schemas, validation, the fixture files."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "acp2" / "check" / "schemas"
SCHEMA_FILES = {
    "aug": SCHEMAS / "acp-v2-aug.json",
    "nov": SCHEMAS / "acp-v2-nov.json",
}
DRAFTS = tuple(SCHEMA_FILES)


@cache
def load_schema(draft: str) -> dict[str, Any]:
    """The vendored schema of ``draft`` (``"aug"`` or ``"nov"``)."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILES[draft].read_text())
    return schema


@cache
def _validator(draft: str, name: str) -> Draft202012Validator:
    schema = load_schema(draft)
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return Draft202012Validator(root)


def has_def(draft: str, name: str) -> bool:
    """Whether ``draft``'s schema defines ``name``."""
    return name in load_schema(draft)["$defs"]


def is_valid(draft: str, name: str, value: Any) -> bool:
    """Whether ``value`` validates against ``#/$defs/<name>`` of ``draft`` (Draft 2020-12)."""
    return bool(_validator(draft, name).is_valid(value))


def fixture_data(name: str) -> Any:
    """The JSON fixture file ``tests/data/fixtures/<name>``."""
    return json.loads((DATA / "fixtures" / name).read_text())
