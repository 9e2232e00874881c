"""The scripted model's decisions: the next step from the conversation so far (pure).

The step is chosen from the tool calls of the *current* turn (everything after the last
user message) and their results, so each prompt replays the same routine on whatever the
workspace holds now.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp2.coder.messages import Message
from acp2.coder.providers.scripted_analysis import (
    find_fix,
    is_test_file,
    summarise,
    verdict_of,
)

__all__ = ["Step", "next_step"]

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """One scripted reply: reasoning, text, and tool calls as ``(name, arguments)``."""

    reasoning: str
    text: str
    calls: tuple[Call, ...] = field(default=())


@dataclass(frozen=True)
class _Done:
    """A tool call of this turn with its result."""

    name: str
    args: dict[str, Any]
    result: str

    @property
    def ok(self) -> bool:
        return not self.result.startswith("Error")


def next_step(messages: Sequence[Message], *, test_command: str) -> Step:
    """Decide what the scripted model says and calls next."""
    done = _this_turn(messages)
    if not done:
        return Step(
            "Before changing anything I should see what is in the workspace.",
            "Let me look around the workspace first.",
            (("list_files", {"pattern": "**"}),),
        )
    last = done[-1]
    names = {d.name for d in done if d.args.get("_exchange") == last.args.get("_exchange")}
    if "run_command" in names:
        return _after_tests(done, _latest(done, "run_command"))
    if "edit_file" in names:
        return _after_edit(done, _latest(done, "edit_file"), test_command)
    if "read_file" in names:
        return _after_reading(done, test_command)
    if "list_files" in names:
        return _after_listing(_latest(done, "list_files"))
    return Step("The plan is complete.", _final_summary(done))


def _this_turn(messages: Sequence[Message]) -> list[_Done]:
    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    results = {m.tool_call_id: m.content for m in messages[start + 1 :] if m.role == "tool"}
    done = []
    for exchange, message in enumerate(messages[start + 1 :]):
        for call in message.tool_calls:
            try:
                args = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                args = {}
            args = dict(args) if isinstance(args, dict) else {}
            args["_exchange"] = exchange
            done.append(_Done(call.name, args, results.get(call.id, "Error: no result")))
    return done


def _latest(done: list[_Done], name: str) -> _Done:
    return next(d for d in reversed(done) if d.name == name)


def _listing(done: list[_Done]) -> list[str]:
    listed = [d for d in done if d.name == "list_files" and d.ok]
    if not listed:
        return []
    return [ln for ln in listed[-1].result.splitlines() if ln and not ln.startswith("[")]


def _after_listing(listing: _Done) -> Step:
    if not listing.ok:
        return Step("Listing failed.", f"I could not list the workspace: {listing.result}")
    paths = [ln for ln in listing.result.splitlines() if ln and not ln.startswith(("[", "No "))]
    if not paths:
        return Step("Nothing to look at.", "The workspace is empty; there is nothing to look at.")
    tests = [p for p in paths if is_test_file(p)][:3]
    if tests:
        code = [p for p in paths if p.endswith(".py") and p not in tests]
        code = [p for p in code if not p.endswith("__init__.py")][:6]
        return Step(
            f"There are tests ({', '.join(tests)}). Reading them with the code they exercise "
            "is the quickest way to find what is wrong.",
            f"I see {len(paths)} files, with tests in {', '.join(tests)}. "
            "I'll read the tests and the code.",
            tuple(("read_file", {"path": p}) for p in [*tests, *code]),
        )
    readme = next((p for p in paths if p.lower().startswith("readme")), None)
    picks = [readme] if readme else paths[:2]
    return Step(
        "No Python tests here, so no bug to chase; a short summary will do.",
        f"I see {len(paths)} files. Let me skim {', '.join(picks)}.",
        tuple(("read_file", {"path": p}) for p in picks),
    )


def _after_reading(done: list[_Done], test_command: str) -> Step:
    reads = {d.args.get("path", ""): d.result for d in done if d.name == "read_file" and d.ok}
    paths = _listing(done)
    if not any(is_test_file(p) for p in reads):
        readme = next((t for p, t in reads.items() if p.lower().startswith("readme")), None)
        return Step("I have seen enough to summarise.", summarise(paths, readme))
    finding = find_fix(reads)
    if finding is None:
        plan = _plan(["Look around the workspace", "Read the tests and the code", "Run the tests"])
        return Step(
            "Nothing in the code looks obviously wrong; the test run will tell.",
            "I read the tests and the code but see no obvious slip. Let me run the tests.",
            (plan, ("run_command", {"command": test_command})),
        )
    test = f"`{finding.test}` calls `{finding.function}`, and " if finding.test else ""
    plan = _plan(
        [
            "Look around the workspace",
            "Read the tests and the code they exercise",
            f"Fix `{finding.function}` in {finding.path}",
            "Run the tests",
        ]
    )
    edit = {"path": finding.path, "old_string": finding.old, "new_string": finding.new}
    return Step(
        f"{test}in {finding.path} {finding.why}.",
        f"Found it: in `{finding.path}`, `{finding.function}` has a bug: {finding.why}. "
        "Here is my plan; first, the fix.",
        (plan, ("edit_file", edit)),
    )


def _plan(titles: list[str], done: int | None = None) -> Call:
    """An ``update_plan`` call: entries before ``done`` completed, that one in progress."""
    current = len(titles) - 2 if done is None else done
    entries = [
        {
            "content": title,
            "priority": "high" if i == current else "medium",
            "status": "completed" if i < current else "in_progress" if i == current else "pending",
        }
        for i, title in enumerate(titles)
    ]
    return ("update_plan", {"entries": entries})


def _plan_titles(done: list[_Done]) -> list[str]:
    plans = [d for d in done if d.name == "update_plan"]
    if not plans:
        return []
    return [str(e.get("content", "")) for e in plans[-1].args.get("entries", [])]


def _after_edit(done: list[_Done], edit: _Done, test_command: str) -> Step:
    if not edit.ok:
        reason = edit.result.removeprefix("Error: ").rstrip(".")
        return Step(
            "The edit did not happen; I must not pretend it did.",
            f"I left the file unchanged ({reason}). The fix would be to replace\n\n"
            f"    {edit.args.get('old_string', '').strip()}\n\nwith\n\n"
            f"    {edit.args.get('new_string', '').strip()}\n\nin `{edit.args.get('path')}`.",
        )
    titles = _plan_titles(done)
    calls = [_plan(titles, len(titles) - 1)] if titles else []
    return Step(
        "The fix is applied; the tests decide whether it is right.",
        "The edit is in. Now let me run the tests.",
        (*calls, ("run_command", {"command": test_command})),
    )


def _after_tests(done: list[_Done], run: _Done) -> Step:
    if run.result.startswith("Error"):
        reason = run.result.removeprefix("Error: ").rstrip(".")
        return Step("No test run, then.", f"I did not run the tests ({reason}).")
    verdict = verdict_of(run.result)
    if "exited with status 0" not in run.result:
        return Step(
            "The tests still fail; a human should look before I guess further.",
            f"The tests still fail ({verdict}); the output is above. I'll stop here.",
        )
    titles = _plan_titles(done)
    calls = (_plan(titles, len(titles)),) if titles else ()
    text = f"The tests pass ({verdict})."
    if not calls:
        return Step("All green.", text + " " + _final_summary(done))
    return Step("All green; let me close the plan.", text, calls)


def _final_summary(done: list[_Done]) -> str:
    edits = [d for d in done if d.name == "edit_file" and d.ok]
    if not edits:
        return "Done."
    path = edits[-1].args.get("path")
    return f"Summary: I fixed the bug in `{path}` with a small edit; the whole test suite passes."
