"""v2 diffs as v1's native ``diff`` content (fault 6): read from the ``git_patch``.

The end-to-end case is a v1 client over real pipes in front of acp2's coding agent
(``acp2 agent``, scripted model) fixing the sample project: the edit reaches it as native
diffs, shown before the permission question, and each diff's regions are what the file
held before and holds after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp2.schema as v2
from acp2.coder.diffs import file_diff
from acp2.coder.sample import copy_sample_project
from acp2.compat.v1.diff_texts import native_diffs
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import SCENARIO_TIMEOUT


def test_a_diff_of_several_files_or_a_custom_format_has_no_native_form() -> None:
    patch = v2.DiffPatch(format="git_patch", text="diff --git /a /a\n@@ -1 +1 @@\n-a\n+b\n")
    two = v2.Diff(
        changes=[v2.DiffModifyChange(path="/a"), v2.DiffAddChange(path="/b")], patch=patch
    )
    custom = v2.Diff(
        changes=[v2.DiffModifyChange(path="/a")], patch=v2.DiffPatch(format="_x", text="")
    )
    binary = file_diff("/a", "a", "b")
    binary.changes[0].file_type = "binary"  # type: ignore[union-attr]
    assert [native_diffs(d) for d in (two, custom, binary)] == [None, None, None]


def test_the_v2_diffs_own_meta_is_kept_next_to_the_line_numbers() -> None:
    diff = file_diff("/a", "a\n", "b\n")
    diff.meta = {"vendor": 1}
    (item,) = native_diffs(diff) or []
    assert item.meta == {"vendor": 1, "acp2": {"oldLine": 1, "newLine": 1}}


class _V1Client:
    """A raw v1 client on an agent's pipes: it allows every permission request."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.received: list[dict[str, Any]] = []
        self._buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def answer(self, rid: int) -> dict[str, Any]:
        while True:
            frame = await self._frame()
            if frame.get("method") == "session/request_permission":
                allow = frame["params"]["options"][0]["optionId"]
                outcome = {"outcome": "selected", "optionId": allow}
                await self.send({"id": frame["id"], "result": {"outcome": outcome}})
            elif frame.get("id") == rid and "method" not in frame:
                return frame

    async def _frame(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            self._buffer += await self.process.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        frame: dict[str, Any] = json.loads(line)
        self.received.append(frame)
        return frame


def _diff_items(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """The v1 ``diff`` items of a ``session/update`` or permission request frame."""
    params = frame.get("params") or {}
    call = params.get("update") or params.get("toolCall") or {}
    content = call.get("content")  # a chunk's content is one block, a tool call's a list
    items = content if isinstance(content, list) else []
    return [item for item in items if item.get("type") == "diff"]


@pytest.mark.anyio
async def test_acp2s_coding_agent_shows_a_v1_client_its_edit_as_native_diffs(
    tmp_path: Path,
) -> None:
    project = copy_sample_project(tmp_path / "sample")
    before = (project / "mathkit" / "series.py").read_text()
    argv = [*ACP2, "agent", "--pace", "0", "--store", str(tmp_path / "h.db")]
    process = await anyio.open_process(argv, cwd=project, env=isolated_env(tmp_path))
    async with process:
        client = _V1Client(process)
        with anyio.fail_after(SCENARIO_TIMEOUT):
            await client.send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
            await client.answer(0)
            new = {"cwd": str(project), "mcpServers": []}
            await client.send({"id": 1, "method": "session/new", "params": new})
            sid = (await client.answer(1))["result"]["sessionId"]
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "Fix the test."}]}
            await client.send({"id": 2, "method": "session/prompt", "params": prompt})
            assert (await client.answer(2))["result"]["stopReason"] == "end_turn"
        process.terminate()
    after = (project / "mathkit" / "series.py").read_text()
    assert before != after
    frames = client.received
    shown = [i for i, f in enumerate(frames) if _diff_items(f)]
    asked = [i for i, f in enumerate(frames) if f.get("method") == "session/request_permission"]
    assert shown, "no native diff reached the v1 client"
    assert shown[0] < asked[0], "the edit was asked for before its diff was shown"
    diffs = [d for i in shown for d in _diff_items(frames[i])]
    assert {d["path"] for d in diffs} == {str((project / "mathkit" / "series.py").resolve())}
    assert all(d["oldText"] in before and d["newText"] in after for d in diffs)
    assert not any("```diff" in json.dumps(f) for f in frames)
