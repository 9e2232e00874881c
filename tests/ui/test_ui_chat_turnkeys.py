"""Keys typed during a turn (acp2.ui.turnkeys): what each line or key does."""

from __future__ import annotations

import io
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from ui_helpers import capture, state_from

from acp2.schema import AvailableCommand
from acp2.ui.interactive import InteractiveChat
from acp2.ui.live import PausableLive
from acp2.ui.turnkeys import TurnKeys
from helpers.timeouts import TIMEOUT


class Recorder(InteractiveChat):
    def __init__(self) -> None:
        super().__init__(capture(), stdin=io.StringIO())
        self.cancels = 0
        state = state_from()
        state.available_commands = [AvailableCommand(name="deploy", description="d")]
        self.session: Any = type(
            "S", (), {"state": state, "id": "s", "cwd": "/", "role": "controller"}
        )()

    def request_cancel(self) -> None:
        self.cancels += 1


def test_cancel_acts_at_once_and_other_lines_are_queued_in_order() -> None:
    chat = Recorder()
    keys = TurnKeys(chat)
    for kind, text in keys.editor.feed(b"/cancel\rfirst\r/deploy now\r/model\r"):
        keys.handle(kind, text)
    assert chat.cancels == 1
    assert chat.queue == ["first", "/deploy now", "/model"]


def test_ctrl_d_on_an_empty_line_leaves_once_idle_and_ctrl_o_expands_output() -> None:
    chat = Recorder()
    keys = TurnKeys(chat)
    for kind, text in keys.editor.feed(b"\x0f\x04"):
        keys.handle(kind, text)
    assert chat.leaving
    assert chat.view.output_lines > 100


@pytest.mark.anyio
async def test_without_a_terminal_the_reader_returns_at_once() -> None:
    chat = Recorder()
    live = PausableLive(chat.console, "x")
    with anyio.fail_after(TIMEOUT):
        await TurnKeys(chat).run(live)


@pytest.mark.anyio
async def test_the_live_region_waits_while_paused() -> None:
    chat = Recorder()
    live = PausableLive(chat.console, "x")
    woke = anyio.Event()

    async def waiter() -> None:
        await live.wait_active()
        woke.set()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.lowlevel.checkpoint()
            assert not woke.is_set()
            live.start()
            await woke.wait()
            live.stop()
    assert live.starts == 1
