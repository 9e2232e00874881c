"""Attack: a glob that backtracks catastrophically, from the workspace's ``.gitignore`` or
from the model (issue 10, §3). Translated to a Python regex, ``*a*a*a*a*a*a*a*a*b``
against a 250-character name runs for hours holding the interpreter lock (measured: 0.12 s
at 40 characters and 7 stars, growing as the 7th power). Globs with several wildcards now
run as an automaton, linear in the name's length."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hostile.coder_attack_helpers import (
    TIMEOUT,
    agent_for,
    coder_session,
    serve,
    text_reply,
    told_to_model,
    tool_reply,
)

pytestmark = pytest.mark.anyio

EVIL_GLOB = "*a*a*a*a*a*a*a*a*b"


async def test_hostile_globs_from_the_workspace_and_the_model_end_quickly(
    tmp_path: Path,
) -> None:
    (tmp_path / ".gitignore").write_text(EVIL_GLOB + "\n")
    (tmp_path / ("a" * 250)).write_text("needle\n")
    calls = [
        ("l1", "list_files", {"pattern": EVIL_GLOB}),
        ("l2", "list_files", {}),
        ("l3", "search", {"pattern": "needle", "glob": EVIL_GLOB}),
        ("l4", "search", {"pattern": "needle"}),
    ]
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(calls), text_reply("done"))
        async with coder_session(agent_for(fake), tmp_path) as session:
            assert await (await session.prompt("look")).wait() == "end_turn"
    told = told_to_model(fake)
    assert told[0] == "No files match."
    assert told[1] == ".gitignore\n" + "a" * 250
    assert told[2] == "No matches."
    assert told[3] == "a" * 250 + ":1: needle"
