"""Schema validation of agent frames against the shipped schemas: ACP v2 Aug, Nov and
Preview, and ACP v1.

Needs the optional ``jsonschema`` package (the ``check`` extra); importing
this module without it raises :class:`MissingJsonschema` with an install hint.

Frames are validated against the definition that fits them, not just the permissive
root ``anyOf``: a response against the result type of the method we called, a
notification or request from the agent against its params type (found through the
schema's own ``x-method`` annotations), an error against ``Error``. Each frame is
validated against the schema of the version it belongs to: a ``v1`` validator judges the
frames of an agent that answered protocol version 1 (the v1 schema has the same
annotations, so the same lookup works for it). The unstable notifications an agent may
send that no shipped schema has yet (``auth/status_update``, from the table's
``UNSTABLE`` entries) are judged by acp2's model of them instead of reported as unknown.
"""

from __future__ import annotations

import importlib
import json
from functools import cache
from importlib import resources
from typing import Any

from acp2.check.frames import is_request, is_response
from acp2.errors import MissingJsonschema
from acp2.schema.codec import decode
from acp2.schema.methods import METHODS, UNSTABLE

__all__ = ["MissingJsonschema", "SchemaValidator", "load_schema", "require_jsonschema"]

_SCHEMA_FILES = {d: f"acp-v2-{d}.json" for d in ("aug", "nov", "preview")} | {"v1": "acp-v1.json"}
_SUFFIXES = ("Request", "Response", "Notification")
#: Unstable notifications an agent may send (with its capability), by wire name.
_UNSTABLE_FROM_AGENT = {
    name: METHODS[name].params_type
    for name in UNSTABLE
    if METHODS[name].sender == "agent" and METHODS[name].kind == "notification"
}


def require_jsonschema() -> None:
    """Raise :class:`MissingJsonschema` with an install hint if ``jsonschema`` is absent."""
    try:
        importlib.import_module("jsonschema")
    except ImportError as exc:
        raise MissingJsonschema(
            "acp2 check validates frames with the optional 'jsonschema' package; "
            "install it into acp2's environment: pip install -e '.[check]' in the acp2 "
            "checkout (or: pip install jsonschema)"
        ) from exc


@cache
def load_schema(draft: str) -> dict[str, Any]:
    """The shipped schema of ``draft`` (``aug``, ``nov``, ``preview``, or ``v1`` for ACP
    v1), parsed once."""
    name = _SCHEMA_FILES[draft]
    text = resources.files("acp2.check").joinpath("schemas", name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


class SchemaValidator:
    """Validates frames against one schema: a v2 draft's (``aug``, ``nov``) or ACP v1's
    (``v1``)."""

    def __init__(self, draft: str) -> None:
        require_jsonschema()
        self.draft = draft
        self.schema = load_schema(draft)
        self.defs: dict[str, Any] = self.schema["$defs"]
        self._methods = self._method_table()
        self._validators: dict[str, Any] = {}

    def _method_table(self) -> dict[str, dict[str, str]]:
        """``method -> {"Request"|"Response"|"Notification": def name, "side": handler}``."""
        table: dict[str, dict[str, str]] = {}
        for name, spec in self.defs.items():
            method = spec.get("x-method") if isinstance(spec, dict) else None
            suffix = next((s for s in _SUFFIXES if name.endswith(s)), None)
            if method and suffix:
                entry = table.setdefault(method, {})
                entry[suffix] = name
                entry["side"] = str(spec.get("x-side", ""))
        return table

    def _validator(self, name: str) -> Any:
        if name not in self._validators:
            jsonschema = importlib.import_module("jsonschema")
            schema = {"$defs": self.defs, "$ref": f"#/$defs/{name}"}
            self._validators[name] = jsonschema.Draft202012Validator(schema)
        return self._validators[name]

    def check(self, name: str, instance: Any) -> str | None:
        """Validate ``instance`` against definition ``name``; the first problem or None."""
        errors = list(self._validator(name).iter_errors(instance))
        if not errors:
            return None
        best_match = importlib.import_module("jsonschema.exceptions").best_match
        error = _explain(best_match(errors))
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        return f"{name} at {where}: {_cut(error.message)}"

    def check_frame(self, value: Any, called: str | None) -> str | None:
        """Validate one agent frame; ``called`` is the method of our request it answers.

        Returns the first problem, or None when the frame is valid. Arrays (batch
        answers) are left to the batch rows.
        """
        if isinstance(value, list) or not isinstance(value, dict):
            return None
        if is_response(value):
            if "error" in value:
                return self.check("Error", value["error"])
            spec = self._methods.get(called or "", {})
            if "Response" in spec:
                return self.check(spec["Response"], value["result"])
            return None
        method = value.get("method")
        if not isinstance(method, str):
            return None
        if method.startswith("_"):
            return None
        spec = self._methods.get(method, {})
        kind = "Request" if is_request(value) else "Notification"
        if not spec and kind == "Notification" and method in _UNSTABLE_FROM_AGENT:
            return _check_unstable(method, value.get("params"))
        # x-side names the side that handles the method: the agent may send only what the
        # client handles (or protocol-level messages such as $/cancel_request).
        if kind not in spec or spec.get("side") == "agent":
            return f"{method!r} is not an ACP {kind.lower()} an agent may send"
        return self.check(spec[kind], value.get("params"))


def _check_unstable(method: str, params: Any) -> str | None:
    """Judge an unstable notification no shipped schema has by acp2's model of it."""
    try:
        decode(json.dumps({} if params is None else params).encode(), _UNSTABLE_FROM_AGENT[method])
    except ValueError as exc:
        return f"{method} (unstable) params: {exc}"
    return None


def _explain(error: Any) -> Any:
    """Descend into an ``anyOf`` error along the one branch whose discriminator fits.

    A tagged union fails with "not valid under any of the given schemas"; the useful
    message is the one from the branch selected by the tag (``sessionUpdate``, ``type``,
    ``state`` ...). A branch is the wrong one when its tag ``const`` fails one level below
    the union, or when it is the ``not`` fallback for unknown tags.
    """
    while error.context:
        depth = len(error.absolute_path)
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        fitting = [
            subs for subs in branches.values() if not any(_wrong_branch(sub, depth) for sub in subs)
        ]
        if len(fitting) != 1:
            break
        error = max(fitting[0], key=lambda sub: len(sub.absolute_path))
    return error


def _wrong_branch(sub: Any, depth: int) -> bool:
    if sub.validator == "not" and len(sub.absolute_path) == depth:
        return True
    return bool(sub.validator in ("const", "enum") and len(sub.absolute_path) == depth + 1)


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
