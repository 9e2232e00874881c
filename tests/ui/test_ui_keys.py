"""One-key answers to a permission request (acp2.ui.keys), driven through a pipe input."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from acp2.client.permission_text import Asked, offers_of
from acp2.schema import PermissionOption, RequestPermissionRequest
from acp2.schema.codec import decode
from acp2.ui.keys import SHOW_RAW, KeyChooser

pytestmark = pytest.mark.anyio

OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def shown(raw: str | None = None) -> Asked:
    params = decode(
        json.dumps({"sessionId": "s", "title": "t", "options": OPTIONS}).encode(),
        RequestPermissionRequest,
    )
    return Asked("t", None, [], [], None, raw, raw, False, offers_of(params.options), None)


@pytest.fixture
def keys() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


async def choose(keys: PipeInput, typed: str, raw: str | None = None) -> object:
    chooser = KeyChooser(shown(raw), output=DummyOutput())
    chooser.app.input = keys
    keys.send_text(typed)
    return await chooser.choose()


@pytest.mark.parametrize(("typed", "option_id"), [("y", "once"), ("a", "always"), ("n", "no")])
async def test_one_letter_picks_the_option_of_its_kind(
    keys: PipeInput, typed: str, option_id: str
) -> None:
    choice = await choose(keys, typed)
    assert isinstance(choice, PermissionOption)
    assert choice.option_id == option_id


async def test_a_number_picks_that_option(keys: PipeInput) -> None:
    choice = await choose(keys, "3")
    assert isinstance(choice, PermissionOption)
    assert choice.option_id == "no"


async def test_arrows_move_the_selection_and_enter_picks_it(keys: PipeInput) -> None:
    choice = await choose(keys, "\x1b[C\x1b[C\r")  # right, right, enter
    assert isinstance(choice, PermissionOption)
    assert choice.option_id == "no"


async def test_escape_declines(keys: PipeInput) -> None:
    assert await choose(keys, "\x1b") is None


async def test_i_asks_for_the_raw_input_when_there_is_one(keys: PipeInput) -> None:
    assert await choose(keys, "i", raw='{"command": "x"}') == SHOW_RAW


async def test_ctrl_c_raises_keyboard_interrupt(keys: PipeInput) -> None:
    with pytest.raises(KeyboardInterrupt):
        await choose(keys, "\x03")
