"""The scripted model on real workspaces, driven through the real loop and tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from coder_helpers import snapshot

from acp2.coder.effects import (
    AskPermission,
    CallModel,
    Emit,
    PermissionAnswer,
    RunTool,
    ShowPlan,
    StartTool,
    ToolOutcome,
)
from acp2.coder.loop import Conversation, coder_loop
from acp2.coder.providers.scripted import ScriptedModel
from acp2.coder.providers.scripted_analysis import find_fix, summarise, verdict_of
from acp2.coder.sample import copy_sample_project, sample_files
from acp2.coder.tools import Prepared, Sandbox, Toolbox, ToolError
from helpers import timeouts


class Run:
    """A minimal effect performer: what the driver does, minus the protocol."""

    def __init__(self, root: Path, answers: dict[str, bool] | None = None) -> None:
        self.toolbox = Toolbox(Sandbox(str(root)), command_timeout=60)
        self.answers = answers or {}
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.tools: list[str] = []
        self.asked: list[str] = []
        self.plans: list[Any] = []
        self.prepared: dict[str, Prepared] = {}

    async def text_(self, delta: str) -> None:
        self.text.append(delta)

    async def write(self, data: bytes) -> None:
        pass

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        pass

    async def open_terminal(self, command: str, cwd: str) -> Any:
        return self

    async def perform(self, effect: Any, model: ScriptedModel) -> Any:
        if isinstance(effect, CallModel):
            sink = type("S", (), {"text": self._say, "reasoning": self._think})()
            return await model.complete(effect.request, sink)
        if isinstance(effect, StartTool):
            self.tools.append(effect.call.name)
            try:
                self.prepared[effect.call.id] = self.toolbox.prepare(
                    effect.call.name, effect.call.arguments
                )
            except ToolError as exc:
                return str(exc)
            return None
        if isinstance(effect, AskPermission):
            self.asked.append(effect.category)
            return PermissionAnswer(self.answers.get(effect.category, True))
        if isinstance(effect, RunTool):
            run = await self.prepared[effect.call.id].execute(self)  # type: ignore[arg-type]
            return ToolOutcome(run.ok, run.output)
        if isinstance(effect, Emit) and isinstance(effect.event, ShowPlan):
            self.plans.append(effect.event.entries)
        return None

    async def _say(self, delta: str) -> None:
        self.text.append(delta)

    async def _think(self, delta: str) -> None:
        self.thoughts.append(delta)

    async def go(self, prompt: str = "Fix the failing test") -> str:
        model = ScriptedModel(python=sys.executable)
        gen = coder_loop(Conversation(), prompt, self.toolbox.specs)
        outcome: Any = None
        with anyio.fail_after(timeouts.RUN_TIMEOUT):
            while True:
                try:
                    effect = gen.send(outcome)
                except StopIteration as stop:
                    return str(stop.value)
                outcome = await self.perform(effect, model)


def unittest_passes(root: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=root,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    return done.returncode == 0


pytestmark = pytest.mark.anyio


async def test_it_lists_reads_plans_edits_runs_the_tests_and_reports(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "p")
    run = Run(project)
    assert await run.go() == "end_turn"
    assert run.tools == ["list_files", "read_file", "read_file", "edit_file", "run_command"]
    assert run.asked == ["edit", "execute"]
    assert "for index in range(len(values)):" in (project / "mathkit" / "series.py").read_text()
    assert unittest_passes(project)
    assert [e.status for e in run.plans[-1]] == ["completed"] * 4
    text = "".join(run.text)
    assert "running_total" in text
    assert "The tests pass (Ran 6 tests" in text
    assert "skipped" in "".join(run.thoughts)


async def test_a_rejected_edit_leaves_the_project_alone_and_explains_the_fix(
    tmp_path: Path,
) -> None:
    project = copy_sample_project(tmp_path / "p")
    before = snapshot(project)
    run = Run(project, answers={"edit": False})
    assert await run.go() == "end_turn"
    assert "run_command" not in run.tools
    assert snapshot(project) == before
    assert "range(len(values))" in "".join(run.text)


async def test_a_rejected_test_run_is_respected(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "p")
    run = Run(project, answers={"execute": False})
    assert await run.go() == "end_turn"
    assert "I did not run the tests" in "".join(run.text)
    assert unittest_passes(project)  # the edit itself was allowed


async def test_a_workspace_without_tests_is_summarised_without_asking(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Recipes\n\nSoups and breads.\n")
    (tmp_path / "soup.txt").write_text("water\n")
    before = snapshot(tmp_path)
    run = Run(tmp_path)
    assert await run.go("What is this?") == "end_turn"
    assert run.tools == ["list_files", "read_file"]
    assert not run.asked
    assert 'The README starts with "Recipes"' in "".join(run.text)
    assert snapshot(tmp_path) == before


async def test_an_empty_workspace_ends_the_turn_politely(tmp_path: Path) -> None:
    run = Run(tmp_path)
    assert await run.go() == "end_turn"
    assert "empty" in "".join(run.text)


async def test_tests_without_a_known_slip_are_run_and_reported(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "test_calc.py").write_text(
        "import unittest\nfrom calc import double\n\n"
        "class T(unittest.TestCase):\n    def test_double(self):\n"
        "        self.assertEqual(double(2), 4)\n"
    )
    run = Run(tmp_path)
    assert await run.go() == "end_turn"
    assert run.tools == ["list_files", "read_file", "read_file", "run_command"]
    assert "The tests pass (Ran 1 test" in "".join(run.text)


async def test_the_script_is_deterministic(tmp_path: Path) -> None:
    first, second = (
        Run(copy_sample_project(tmp_path / "a")),
        Run(copy_sample_project(tmp_path / "b")),
    )
    await first.go()
    await second.go()
    assert first.text == second.text
    assert first.tools == second.tools


def test_the_sample_bug_is_found_in_the_function_the_tests_call() -> None:
    finding = find_fix(sample_files())
    assert finding is not None
    assert (finding.path, finding.function) == ("mathkit/series.py", "running_total")
    assert finding.old.strip() == "for index in range(1, len(values)):"
    assert finding.new.strip() == "for index in range(len(values)):"
    assert finding.test == "test_running_total_has_one_sum_per_value"


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("    for i in range(len(xs) - 1):", "    for i in range(len(xs)):"),
        ("    return sum(xs) / (len(xs) + 1)", "    return sum(xs) / len(xs)"),
    ],
)
def test_each_known_slip_has_its_fix(line: str, fixed: str) -> None:
    files = {"m.py": f"def f(xs):\n{line}\n", "test_m.py": "f([1])\n"}
    finding = find_fix(files)
    assert finding is not None
    assert finding.new == fixed


def test_functions_no_test_calls_are_left_alone() -> None:
    files = {
        "m.py": "def g(xs):\n    for i in range(1, len(xs)):\n        pass\n",
        "test_m.py": "f([1])\n",
    }
    assert find_fix(files) is None


def test_summaries_and_verdicts_read_naturally() -> None:
    assert summarise([], None) == "The workspace is empty."
    text = summarise(["a.py", "b.py", "docs/x.md"], "# Title\nbody")
    assert text.startswith("The workspace has 3 files (2 py files, 1 md files).")
    assert verdict_of("...\nRan 3 tests in 0.01s\n\nOK\n") == "Ran 3 tests: OK"
    assert verdict_of("nothing") == "see the output above"
