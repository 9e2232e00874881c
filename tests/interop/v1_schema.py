"""Validate a ``tap.py`` log against the vendored ACP v1 schema.

``validate_v1_log(path)`` returns readable problems (``[]`` = valid) for every frame of
the log under ``src/acp2/compat/v1/schemas/acp-v1.json``, with the method rules of
``tests/schema_validation.py`` (method known and sent in its direction, params against
its ``x-method`` definition, results against the definition of the request they
answer, errors against ``Error``). The v1 file has the same ``x-method`` / ``x-side``
layout as the v2 drafts, so the v2 validator's machinery is reused with v1's
definitions.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from referencing import Registry
from referencing.jsonschema import DRAFT202012

import schema_validation

V1_SCHEMA = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "acp2"
    / "compat"
    / "v1"
    / "schemas"
    / "acp-v1.json"
)


class V1Schema(schema_validation.DraftSchema):
    """The v1 schema, with the compiled validators of ``DraftSchema``."""

    def __init__(self) -> None:  # the parent reads only the v2 folder
        contents = json.loads(V1_SCHEMA.read_text(encoding="utf-8"))
        self.draft = "v1"
        self.defs = contents["$defs"]
        self.uri = "urn:acp2:schema:v1"
        self.registry = Registry().with_resource(self.uri, DRAFT202012.create_resource(contents))
        self.methods = schema_validation._method_table(self.defs)
        self._validators = {}
        self._compiled = {}


@functools.cache
def v1_schema() -> V1Schema:
    """The (cached) v1 schema."""
    return V1Schema()


def validate_v1_frame(frame: Any, sender: str, answers: dict[Any, str]) -> list[str]:
    """Problems of one frame sent by ``sender``; ``answers`` maps the other side's
    pending request ids to their methods."""
    if not isinstance(frame, dict):
        return [f"{sender}: not a JSON-RPC object: {type(frame).__name__}"]
    where = f"{sender} {schema_validation._describe(frame)}"
    problems = [] if frame.get("jsonrpc") == "2.0" else [f"{where}: jsonrpc must be '2.0'"]
    if "method" in frame:
        return problems + schema_validation._validate_call(frame, sender, v1_schema(), where)  # type: ignore[arg-type]
    return problems + schema_validation._validate_response(frame, v1_schema(), where, answers)


def validate_v1_log(path: str | Path) -> list[str]:
    """Problems of every frame of a tap log under the v1 schema (``[]`` = valid)."""
    pending: dict[str, dict[Any, str]] = {"agent": {}, "client": {}}
    problems = []
    with open(path, encoding="utf-8") as handle:
        for text in filter(str.strip, handle):
            record = json.loads(text)
            sender = "client" if record["dir"] == "client->agent" else "agent"
            other = "agent" if sender == "client" else "client"
            frame = json.loads(record["line"])
            for problem in validate_v1_frame(frame, sender, pending[other]):
                problems.append(f"[v1] #{record['seq']} {problem}")
            if isinstance(frame, dict) and "method" in frame and "id" in frame:
                pending[sender][frame["id"]] = frame["method"]
            elif isinstance(frame, dict) and "method" not in frame:
                pending[other].pop(frame.get("id"), None)
    return problems
