"""The permission policy of the e2e suite: a desk the test tells how to answer."""

from __future__ import annotations

import anyio

from acp2.client import PermissionRequest
from acp2.schema import PermissionOption

__all__ = ["Desk"]

ALLOW = ("allow_once", "allow_always")
REJECT = ("reject_once", "reject_always")


class Desk:
    """The client's permission policy in these tests, steered by the test.

    It answers an allow option while ``answer`` is ``"allow"``, a reject option for
    ``"deny"``. With ``hold`` set it first waits for :meth:`release`, so a test can look
    at the session while the agent waits for the answer. ``titles`` lists every request.
    """

    def __init__(self) -> None:
        self.answer = "allow"
        self.hold = False
        self.titles: list[str] = []
        self.asked = anyio.Event()
        self._released = anyio.Event()

    def release(self) -> None:
        """Let held requests be answered."""
        self._released.set()

    async def __call__(self, request: PermissionRequest) -> PermissionOption | None:
        """Answer one request as configured."""
        self.titles.append(request.title)
        self.asked.set()
        if self.hold:
            await self._released.wait()
        return request.option_of_kind(*(ALLOW if self.answer == "allow" else REJECT))
