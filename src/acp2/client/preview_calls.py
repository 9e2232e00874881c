"""The Preview's unstable requests of :class:`~acp2.client.ClientConnection` (a mixin).

``session/fork``, ``session/set_title``, ``session/archive`` / ``unarchive``, the
``providers/*`` methods of the custom LLM endpoint RFD, and acp2's ``_acp2/session/steer``.
Each is sent only to an agent that advertised its capability
(:mod:`acp2.client.unstable`); otherwise the call raises
:class:`~acp2.errors.LocalProtocolError` and sends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp2.client.checks import session_capabilities
from acp2.client.session import ClientSession, UpdateListener
from acp2.errors import LocalProtocolError
from acp2.schema.methods import (
    PROVIDERS_DISABLE,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    SESSION_ARCHIVE,
    SESSION_FORK,
    SESSION_SET_TITLE,
    SESSION_UNARCHIVE,
)
from acp2.schema.providers import (
    DisableProvidersRequest,
    ListProvidersRequest,
    ProviderInfo,
    SetProvidersRequest,
)
from acp2.schema.session_ops import ForkSessionRequest, SetSessionTitleRequest

if TYPE_CHECKING:
    import os

    from acp2.client.core import ClientCore
    from acp2.client.env import SessionEnv
    from acp2.schema import AgentCapabilities

    PathLike = str | os.PathLike[str]

__all__ = ["PreviewCalls"]


class PreviewCalls:
    """The unstable calls; :class:`~acp2.client.ClientConnection` provides the state."""

    if TYPE_CHECKING:
        _link: ClientCore[ClientSession]
        env: SessionEnv
        mcp_servers: list[Any]

        @property
        def agent_capabilities(self) -> AgentCapabilities:
            """What the agent advertised."""

        @property
        def sessions(self) -> dict[str, ClientSession]:
            """The live sessions by id."""

        def _paths(
            self, cwd: PathLike | None, dirs: Sequence[PathLike] | None
        ) -> tuple[str, list[str] | None]: ...

    # -- fork and title (Preview, unstable) -------------------------------------------------

    async def fork(
        self,
        session_id: str,
        *,
        cwd: PathLike | None = None,
        additional_directories: Sequence[PathLike] | None = None,
        on_update: UpdateListener | None = None,
    ) -> ClientSession:
        """``session/fork``: a new session that starts from ``session_id``'s context, which
        is left as it was; return it (live on this connection, rooted at ``cwd``, default
        the connection's cwd). Raises ``LocalProtocolError`` (nothing sent) unless the agent
        advertised ``session.fork``, the agent's ``RequestError`` otherwise."""
        from acp2.client.unstable import check_fork  # few clients fork: loaded on use

        check_fork(self.agent_capabilities)
        cwd_s, dirs = self._paths(cwd, additional_directories)
        params = ForkSessionRequest(session_id=session_id, cwd=cwd_s)
        if dirs is not None:
            params.additional_directories = dirs
        if self.mcp_servers:
            params.mcp_servers = list(self.mcp_servers)
        response = await self._link.call(SESSION_FORK, params)
        session = ClientSession(self.env, self._link, response.session_id, cwd_s)
        if on_update is not None:
            session.add_listener(on_update)
        self._link.attach(session)
        session.seed(None, response.config_options)
        return session

    async def archive(self, session_id: str, *, archived: bool = True) -> None:
        """``session/archive`` (``archived=False``: ``session/unarchive``): hide the session
        from the default ``session/list`` (or show it again), keeping its history; the
        agent closes it first. Raises ``LocalProtocolError`` (nothing sent) unless the
        agent advertised ``session.archive``, the agent's ``RequestError`` otherwise."""
        from acp2.client.unstable import check_archive
        from acp2.schema.session_ops import ArchiveSessionRequest, UnarchiveSessionRequest

        check_archive(self.agent_capabilities)
        if archived:
            await self._link.call(SESSION_ARCHIVE, ArchiveSessionRequest(session_id=session_id))
        else:
            params = UnarchiveSessionRequest(session_id=session_id)
            await self._link.call(SESSION_UNARCHIVE, params)
        live = self.sessions.get(session_id)
        if archived and live is not None:
            self._link.detach(live)

    async def set_title(self, session_id: str, title: str) -> str:
        """``session/set_title``: name the session; return the title the agent stored
        (it may normalise it). Raises ``LocalProtocolError`` (nothing sent) unless the agent
        advertised ``session.title``, the agent's ``RequestError`` otherwise."""
        from acp2.client.unstable import check_title

        check_title(self.agent_capabilities)
        params = SetSessionTitleRequest(session_id=session_id, title=title)
        response = await self._link.call(SESSION_SET_TITLE, params)
        return response.title

    async def steer(self, session_id: str, prompt: str | Sequence[Any]) -> str | None:
        """``_acp2/session/steer``: give the session's *running* work more to go on (text, or
        content blocks); the agent reads it at its next step and every client sees it as a
        ``user_message``. Returns that message's id, or None when nothing was running (send
        a prompt instead). Raises ``LocalProtocolError`` (nothing sent) unless the agent
        advertised it (``capabilities.session._meta.acp2.steer``), the agent's
        ``RequestError`` otherwise."""
        from acp2.schema import TextContent
        from acp2.schema.extensions import SESSION_STEER, SteerSessionRequest, supports_steer

        if not supports_steer(session_capabilities(self.agent_capabilities)):
            raise LocalProtocolError("The agent does not advertise steering (_acp2/session/steer)")
        blocks = [TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        params = SteerSessionRequest(session_id=session_id, prompt=blocks)
        answer = await self._link.call(SESSION_STEER, params)
        return answer.message_id if answer.outcome == "steered" and answer.message_id else None

    # -- model providers (custom LLM endpoint RFD; Preview, unstable) ----------------------

    async def list_providers(self) -> list[ProviderInfo]:
        """``providers/list``: the agent's configurable model providers (no secrets).
        Raises ``LocalProtocolError`` (nothing sent) unless it advertised ``providers``."""
        from acp2.client.unstable import check_providers

        check_providers(self.agent_capabilities)
        return (await self._link.call(PROVIDERS_LIST, ListProvidersRequest())).providers

    async def set_provider(
        self,
        provider_id: str,
        base_url: str,
        *,
        api_type: str = "openai",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``providers/set``: route ``provider_id`` to ``base_url`` with the complete
        ``headers`` (an ``Authorization`` header carries the key). Raises as
        :meth:`list_providers`, or the agent's ``RequestError``."""
        from acp2.client.unstable import check_providers

        check_providers(self.agent_capabilities)
        params = SetProvidersRequest(
            provider_id=provider_id,
            api_type=api_type,
            base_url=base_url,
            headers=dict(headers or {}),
        )
        await self._link.call(PROVIDERS_SET, params)

    async def disable_provider(self, provider_id: str) -> None:
        """``providers/disable``: turn ``provider_id`` off. Raises as :meth:`set_provider`."""
        from acp2.client.unstable import check_providers

        check_providers(self.agent_capabilities)
        await self._link.call(PROVIDERS_DISABLE, DisableProvidersRequest(provider_id=provider_id))
