"""Checks over every frame of every agent process of the run (after the probes).

stdout hygiene (TR-03, TR-01), ids answered once with their type and no answers to
notifications (TR-09, TR-08), error object shapes (TR-12), ``messageId`` on every message
update (MU-01), patch shapes (MU-05), config option ids once per list (CO-10), token
usage on idles (US-05, Preview), the subagent rules (SS-30 .. SS-32, see
:mod:`acp2.check.audit_subagents`), and schema
validity under both drafts. Each frame is
validated against the schema of the version its link speaks: the frames of a link whose
agent answered ``initialize`` in v1's shape against ``acp-v1.json``. For an agent judged
as ACP v1 the rows are the v1 rows (``V1-TR-09`` ..., ``V1-SCHEMA``) and the v2-only
message rows are not judged (v1 messages have no ids and no upserts).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from acp2.check.audit_base import Row as _Row
from acp2.check.audit_base import evidence as _ev
from acp2.check.audit_subagents import SUBAGENT_ROWS, subagents
from acp2.check.driver import ClientCore
from acp2.check.frames import (
    MESSAGE_KINDS,
    Frame,
    envelope_problem,
    is_notification,
    is_response,
    session_update,
    short,
)
from acp2.check.probes.base import Shared
from acp2.check.requirements import DRAFTS, V1
from acp2.check.results import Status
from acp2.check.validator import SchemaValidator
from acp2.schema.methods import SESSION_UPDATE

__all__ = ["AUDIT_ROWS", "audit"]

AUDIT_ROWS = (
    "TR-03",
    "TR-01",
    "TR-09",
    "TR-08",
    "TR-12",
    "EX-04:notes",
    "MU-01",
    "MU-05",
    "CO-10",
    "US-05",
    *SUBAGENT_ROWS,
    "SCHEMA:aug",
    "SCHEMA:nov",
)
_EXPECTED_NULL_ID = ("malformed:", "batch:")
_UPSERTS = frozenset({"user_message", "agent_message", "agent_thought"})


def audit(shared: Shared) -> None:
    """Record the transcript-wide findings for every link of the run."""
    pairs = [(link, f) for link in shared.links for f in link.frames]
    _stdout(shared, pairs)
    _ids(shared, pairs)
    _unsolicited(shared, pairs)
    if shared.version == 1:
        _schema(shared, pairs, V1)
        return
    _messages(shared, pairs)
    _config_ids(shared, pairs)
    _idle_usage(shared, pairs)
    subagents(shared)
    for draft in DRAFTS:
        _schema(shared, pairs, draft)


def _stdout(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    garbage, envelope = _Row(shared, "TR-03"), _Row(shared, "TR-01")
    for link, frame in pairs:
        if frame.problem and frame.problem.startswith("not UTF-8"):
            envelope.add(frame.problem, _ev(link, frame))
        elif frame.problem:
            garbage.add("a line that is not JSON", _ev(link, frame))
        elif problem := envelope_problem(frame.value):
            envelope.add(problem, _ev(link, frame, problem))
    total = f"{len(pairs)} lines from {len(shared.links)} agent processes"
    garbage.finish(f"{total}, all JSON")
    envelope.finish(f"{total}, all JSON-RPC 2.0")


def _ids(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    ids, notes, errors = _Row(shared, "TR-09"), _Row(shared, "TR-08"), _Row(shared, "TR-12")
    seen: Counter[tuple[int, str]] = Counter()
    answered = 0
    for link, frame in pairs:
        for value in frame.value if isinstance(frame.value, list) else [frame.value]:
            if not is_response(value):
                continue
            answered += 1
            _error_shape(errors, link, frame, value)
            if isinstance(frame.value, list):
                continue
            rid = value.get("id")
            if rid is None:
                if not frame.step.startswith(_EXPECTED_NULL_ID):
                    notes.add(
                        "a response with id null where only valid messages were sent",
                        _ev(link, frame),
                    )
                continue
            if link.method_of(rid) is None:
                why = (
                    "the id came back with another JSON type"
                    if any(i == rid or str(i) == str(rid) for i, _ in link.called)
                    else "answers an id the checker never sent"
                )
                ids.add(why, _ev(link, frame, why))
                continue
            seen[(id(link), repr(rid))] += 1
            if seen[(id(link), repr(rid))] == 2:
                ids.add("a request was answered twice", _ev(link, frame))
    ids.finish(f"{answered} responses, each to a request of ours with its id type")
    notes.finish("no response without a request")
    errors.finish("every error has an integer code and a string message", checked=answered)


def _unsolicited(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    """EX-04:notes: the notifications other than ``session/update`` the agent sent, by
    method. Informational: probes never count them as answers to what they sent."""
    methods: Counter[str] = Counter()
    for _, frame in pairs:
        value = frame.value
        if is_notification(value) and value.get("method") != SESSION_UPDATE.name:
            methods[short(str(value.get("method")), 60)] += 1
    listed = ", ".join(f"{m} x{n}" for m, n in methods.most_common(8))
    reason = f"{sum(methods.values())} notification(s): {listed}" if methods else "none"
    shared.findings.add(shared.key("EX-04:notes"), Status.PASS, reason, probe="audit")


def _error_shape(row: _Row, link: ClientCore, frame: Frame, value: dict[str, Any]) -> None:
    if "error" not in value:
        return
    error = value["error"]
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if type(code) is not int or not isinstance(message, str):
        row.add("an error without an integer code and a string message", _ev(link, frame))


def _messages(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    ids, shapes = _Row(shared, "MU-01"), _Row(shared, "MU-05")
    messages = updates = 0
    for link, frame in pairs:
        update = session_update(frame.value)
        if update is None:
            continue
        updates += 1
        kind = update.get("sessionUpdate")
        if kind in MESSAGE_KINDS:
            messages += 1
            if not isinstance(update.get("messageId"), str):
                ids.add(f"{kind} without a string messageId", _ev(link, frame))
        if problem := _shape_problem(kind, update):
            shapes.add(problem, _ev(link, frame, problem))
    ids.finish(f"{messages} message updates, all with a messageId", checked=messages)
    shapes.finish(f"{updates} updates with well-formed patch shapes", checked=updates)


def _shape_problem(kind: Any, update: dict[str, Any]) -> str | None:
    """Why an update's patch shape is wrong (MU-04/MU-05, TC-03, TC-05), or None."""
    content = update.get("content")
    if isinstance(kind, str) and kind.endswith("_chunk"):
        if not (isinstance(content, dict) and isinstance(content.get("type"), str)):
            return f"{kind}: content must be one block object"
    elif kind in _UPSERTS or kind == "tool_call_update":
        if content is not None and not isinstance(content, list):
            return f"{kind}: content must be an array, null or omitted"
        if kind == "tool_call_update" and not isinstance(update.get("toolCallId"), str):
            return "tool_call_update without a toolCallId"
    elif kind == "state_update" and not isinstance(update.get("state"), str):
        return "state_update without a state"
    return None


def _config_lists(value: Any) -> list[list[Any]]:
    """The config option lists one frame carries: in a result (new, resume,
    set_config_option) or a ``config_option_update``."""
    result = value.get("result") if isinstance(value, dict) else None
    update = session_update(value)
    holders = [h for h in (result, update) if isinstance(h, dict)]
    return [h["configOptions"] for h in holders if isinstance(h.get("configOptions"), list)]


def _config_ids(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    """CO-10: ``set_config_option`` names an option by its ``configId``, so no list
    holds an id twice (a v1 bridge once showed ``[mode, model, mode]``)."""
    row = _Row(shared, "CO-10")
    lists = 0
    for link, frame in pairs:
        for options in _config_lists(frame.value):
            lists += 1
            ids = Counter(o.get("configId") for o in options if isinstance(o, dict))
            if repeated := sorted(str(i) for i, n in ids.items() if n > 1):
                why = f"configId listed twice: {', '.join(repeated)}"
                row.add(why, _ev(link, frame, why))
    # An audit row: no frame broke it (an agent without config options sends no list).
    passed = f"{lists} config option lists, each configId once" if lists else "no option lists"
    row.finish(passed, checked=1)


_USAGE_REQUIRED = ("totalTokens", "inputTokens", "outputTokens")
_USAGE_OPTIONAL = ("thoughtTokens", "cachedReadTokens", "cachedWriteTokens")


def _idle_usage(shared: Shared, pairs: list[tuple[ClientCore, Frame]]) -> None:
    """US-05: the Preview's ``usage`` on an idle ``state_update`` (unstable; the
    schemas here do not know it: any object passes them as an extra key)."""
    row = _Row(shared, "US-05")
    reports = 0
    for link, frame in pairs:
        update = session_update(frame.value)
        if update is None or update.get("sessionUpdate") != "state_update":
            continue
        usage = update.get("usage")
        if usage is None or update.get("state") != "idle":
            continue
        reports += 1
        if problem := _usage_problem(usage):
            row.add(problem, _ev(link, frame, problem))
    row.finish(f"{reports} idle usage reports, all well-formed", checked=reports)


def _usage_problem(usage: Any) -> str | None:
    """Why an idle's ``usage`` is malformed, or None."""
    if not isinstance(usage, dict):
        return "usage on an idle must be an object"
    for key in _USAGE_REQUIRED:
        if not _count(usage.get(key)):
            return f"usage.{key} must be a non-negative integer"
    for key in _USAGE_OPTIONAL:
        if usage.get(key) is not None and not _count(usage[key]):
            return f"usage.{key} must be a non-negative integer when given"
    return None


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _schema(shared: Shared, pairs: list[tuple[ClientCore, Frame]], draft: str) -> None:
    """Row ``SCHEMA:<draft>`` (``V1-SCHEMA`` for ``v1``): every frame valid under the
    schema of its link's version (``draft``'s for v2 links, v1's for v1 links)."""
    validators = {2: SchemaValidator(draft), 1: SchemaValidator(V1)}
    row = _Row(shared, "V1-SCHEMA" if draft == V1 else f"SCHEMA:{draft}")
    checked = Counter[int]()
    for link, frame in pairs:
        if not frame.ok or envelope_problem(frame.value):
            continue
        value = frame.value
        called = link.method_of(value.get("id")) if isinstance(value, dict) else None
        checked[link.version] += 1
        if problem := validators[link.version].check_frame(value, called):
            row.add(short(problem, 120), _ev(link, frame, short(problem, 120)))
    passed = f"{checked[2]} frames valid under acp-v2-{draft}.json" if draft != V1 else ""
    if checked[1]:
        v1 = f"{checked[1]} frames of v1 answers valid under acp-v1.json"
        passed = f"{passed} and {v1}" if passed else v1
    row.finish(passed, checked=checked.total())
