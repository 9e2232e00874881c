"""Fixtures of the e2e suite: every test that takes ``link`` runs once per transport.

``link`` is an initialized :class:`acp2.client.ClientConnection` to a fresh
``e2e_agent`` over the transport named by the ``transport`` parameter (see
:data:`e2e_links.LINKS`); its permission requests are answered by ``desk``. Tests that
restart the agent use ``opener`` (same transport, same store) instead.

A feature that cannot cross a transport says so in data, on the test:
``@pytest.mark.not_over(TRANSPORTS, reason)``. Those combinations are never generated (so
nothing is skipped at run time, which CI forbids); the reason is the record of why.
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "not_over(transports, reason): the test's feature cannot cross these"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that uses a link once per transport it can cross."""
    if "transport" not in metafunc.fixturenames:
        return
    excluded: set[str] = set()
    for mark in metafunc.definition.iter_markers("not_over"):
        transports, reason = mark.args
        assert reason, mark
        assert set(transports) <= set(LINKS), mark
        excluded.update(transports)
    names = [name for name in sorted(LINKS) if name not in excluded]
    metafunc.parametrize("transport", names, ids=names)


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
