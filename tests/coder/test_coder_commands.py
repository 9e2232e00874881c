"""The coding agent's /compact, /diff and /undo (acp2.coder.commands): offered as ACP
available_commands, run on the real sample project with the scripted model."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from coder_helpers import TIMEOUT, Recorder, coder_session, text_of

from acp2.coder import build_coder_agent
from acp2.coder.messages import ModelReply, ModelRequest
from acp2.coder.providers.base import StreamSink
from acp2.coder.providers.scripted import ScriptedModel
from acp2.coder.sample import copy_sample_project
from acp2.errors import ModelError
from acp2.schema import Diff

pytestmark = pytest.mark.anyio

SERIES = "mathkit/series.py"


async def ask(session: object, text: str) -> str:
    work = await session.prompt(text)  # type: ignore[attr-defined]
    assert await work.wait() == "end_turn"
    return text_of(work.updates)


async def test_the_agent_offers_compact_diff_and_undo(tmp_path: Path) -> None:
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, tmp_path, permissions=Recorder("allow_once")) as session:
            names = [c.name for c in session.state.available_commands]
    assert names == ["compact", "diff", "undo"]


async def test_diff_shows_what_the_session_wrote_and_undo_reverts_it(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "sample")
    before = (project / SERIES).read_text()
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=Recorder("allow_once")) as session:
            assert "changed no files" in await ask(session, "/diff")
            assert "Nothing to undo" in await ask(session, "/undo")
            await ask(session, "Please fix the failing test.")
            after = (project / SERIES).read_text()
            assert after != before
            shown = await ask(session, "/diff")
            assert shown.startswith("```diff\n")
            assert f"+++ {SERIES}" in shown
            work = await session.prompt("/undo")
            assert await work.wait() == "end_turn"
            assert f"Reverted the last edit of {SERIES}" in text_of(work.updates)
            undo = list(session.state.tool_calls.values())[-1]
            assert undo.status == "completed"
            assert isinstance(undo.content[0], Diff)
            assert (project / SERIES).read_text() == before
            assert "changed no files" in await ask(session, "/diff")
            assert "Nothing to undo" in await ask(session, "/undo")


async def test_undo_refuses_when_the_file_changed_since_the_edit(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "sample")
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=Recorder("allow_once")) as session:
            await ask(session, "Please fix the failing test.")
            (project / SERIES).write_text("# the user's own work\n")
            said = await ask(session, "/undo")
    assert "Not undone" in said
    assert "changed since" in said
    assert (project / SERIES).read_text() == "# the user's own work\n"


class Recording(ScriptedModel):
    """The scripted model, keeping the roles of every request it was sent."""

    def __init__(self) -> None:
        super().__init__(python=sys.executable)
        self.requests: list[list[str]] = []

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        self.requests.append([m.role for m in request.messages])
        return await super().complete(request, sink)


async def test_compact_goes_on_from_the_models_summary(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "sample")
    model = Recording()
    agent = build_coder_agent(model, store=":memory:")
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=Recorder("allow_once")) as session:
            assert "Nothing to compact" in await ask(session, "/compact")
            await ask(session, "Please fix the failing test.")
            long = len(model.requests[-1]) + 1  # the last request, then the final reply
            said = await ask(session, "/compact")
            assert said.startswith(f"Compacted the conversation ({long} messages)")
            assert model.requests[-1][-1] == "user"  # the summary request, tools off
            model.requests.clear()
            await ask(session, "What next?")
    assert model.requests[0] == ["system", "user", "user"]  # summary, then the new prompt


async def test_a_session_is_titled_with_the_first_line_of_its_first_prompt(
    tmp_path: Path,
) -> None:
    project = copy_sample_project(tmp_path / "sample")
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=Recorder("reject_once")) as session:
            await ask(session, "/diff")  # a command names nothing
            assert session.state.title is None
            await ask(session, "Please fix the failing test.\nThe one in tests/.")
            assert session.state.title == "Please fix the failing test."
            await ask(session, "And now something else")
            assert session.state.title == "Please fix the failing test."


class FailsToSummarise(ScriptedModel):
    """The scripted model, failing the summary request as an unreachable server would."""

    def __init__(self) -> None:
        super().__init__(python=sys.executable)

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        if not request.tools:  # the summary request offers no tools
            raise ModelError("the model server did not answer")
        return await super().complete(request, sink)


async def test_a_failed_summary_keeps_the_conversation(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "sample")
    agent = build_coder_agent(FailsToSummarise(), store=":memory:")
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=Recorder("reject_once")) as session:
            await ask(session, "Please fix the failing test.")
            said = await ask(session, "/compact")
    assert said == (
        "Not compacted: the model server did not answer. The conversation is kept as it was."
    )
