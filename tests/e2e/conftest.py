"""Fixtures of the e2e suite: every test that takes ``link`` runs once per transport.

``link`` is an initialized :class:`acp2.client.ClientConnection` to a fresh
``e2e_agent`` over the transport named by the ``transport`` parameter (see
:data:`e2e_links.LINKS`); its permission requests are answered by ``desk``. Tests that
restart the agent use ``opener`` (same transport, same store) instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path

import pytest
from e2e_desk import Desk
from e2e_links import LINKS

from acp2.client import ClientConnection


@pytest.fixture(params=sorted(LINKS))
def transport(request: pytest.FixtureRequest) -> str:
    """The name of the transport this run of the test uses."""
    name: str = request.param
    return name


@pytest.fixture
def desk() -> Desk:
    """The permission policy of this test's connections."""
    return Desk()


@pytest.fixture
def opener(
    transport: str, tmp_path: Path, desk: Desk
) -> partial[AbstractAsyncContextManager[ClientConnection]]:
    """``opener()``: connect to a fresh agent over ``transport``, history in ``tmp_path``."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    return partial(LINKS[transport], tmp_path / "history.sqlite", cwd=workdir, permissions=desk)


@pytest.fixture
async def link(
    opener: partial[AbstractAsyncContextManager[ClientConnection]],
) -> AsyncIterator[ClientConnection]:
    """An initialized client connection over this test's transport."""
    async with opener() as client:
        yield client
