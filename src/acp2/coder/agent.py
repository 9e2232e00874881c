"""The built-in coding agent as an :class:`~acp2.agent.Agent`.

::

    agent = build_coder_agent("openai", model_name="qwen2.5", base_url="http://127.0.0.1:8000/v1")
    agent.run()                      # ACP v2 on stdin/stdout

Per session it keeps, in ``session.data``, the conversation with the model and the
permission answers given with "always" (see :class:`~acp2.coder.loop.Conversation`),
and the files it wrote (:mod:`acp2.coder.commands`). A session is titled with the
first line of its first prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from acp2.agent import Agent
from acp2.agent.mcp import McpOptions
from acp2.agent.steering import take_steering
from acp2.agent.system_prompt import system_prompt_of
from acp2.coder.commands import COMMANDS, command_of, journal_of, run_command
from acp2.coder.driver import Driver
from acp2.coder.loop import Conversation, coder_loop
from acp2.coder.mcptools import sandbox_launcher, with_mcp
from acp2.coder.messages import Message
from acp2.coder.providers import ChatModel, make_model
from acp2.coder.providers.endpoints import CoderProviders
from acp2.coder.task_tool import TASK_TOOL, TaskRunner
from acp2.coder.tools import Sandbox, Toolbox
from acp2.coder.tools.confine import CommandPolicy
from acp2.coder.tools.limits import DEFAULT_LIMITS, FileLimits
from acp2.coder.tools.sandbox import DEFAULT_PROTECTED
from acp2.schema import EmbeddedResource, ResourceLink, SessionInfoUpdate, TextContent

if TYPE_CHECKING:
    from acp2.agent import AgentSession, Turn
    from acp2.store.base import StoreSpec

__all__ = ["CONVERSATION_KEY", "CoderSettings", "build_coder_agent", "prompt_text"]

#: Where the session's :class:`Conversation` lives in ``session.data``.
CONVERSATION_KEY = "acp2.coder.conversation"
#: The longest session title taken from a first prompt.
TITLE_CHARS = 60
#: The MCP servers whose failure the user was told of, in ``session.data``.
MCP_REPORTED_KEY = "acp2.coder.mcp_reported"


@dataclass(frozen=True)
class CoderSettings:
    """Limits of the agent: ``max_requests`` model requests per prompt (then
    ``max_turn_requests``), the ``context_window`` reported as usage ``size``, the
    default ``command_timeout`` in seconds, how ``commands`` are confined (see
    :class:`~acp2.coder.tools.confine.CommandPolicy`; by default the best sandbox the
    machine offers, without network), the file tools' ``file_limits`` and the
    ``protected_paths`` no tool may write (see :mod:`acp2.coder.tools.sandbox`).
    ``mcp_sandbox``: stdio MCP servers run in the same sandbox as commands (default);
    ``mcp`` the limits for MCP servers (see :class:`~acp2.agent.mcp.McpOptions`)."""

    max_requests: int = 50
    context_window: int = 128_000
    command_timeout: float = 120.0
    file_limits: FileLimits = DEFAULT_LIMITS
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED
    commands: CommandPolicy = field(default_factory=CommandPolicy)
    mcp_sandbox: bool = True
    mcp: McpOptions = field(default_factory=McpOptions)


def build_coder_agent(
    model: ChatModel | str = "scripted",
    *,
    settings: CoderSettings | None = None,
    store: StoreSpec = None,
    name: str = "acp2-coder",
    **model_options: Any,
) -> Agent:
    """Return the coding agent, ready to :meth:`~acp2.agent.Agent.serve` or ``run``.

    ``model`` is a :class:`ChatModel` or a name for :func:`make_model` (then
    ``model_options`` go to it). ``store`` is the session history (see :class:`Agent`).
    """
    chat = make_model(model, **model_options) if isinstance(model, str) else model
    limits = _hide_model_key(settings or CoderSettings(), chat)
    agent = Agent(name, version=_version(), title="acp2 coding agent", store=store)
    agent.commands = COMMANDS  # /compact, /diff, /undo
    _offer_mcp(agent, limits)

    endpoints = CoderProviders(chat)
    agent.providers = endpoints  # providers/list, set, disable (custom LLM endpoint RFD)

    @agent.prompt
    async def on_prompt(turn: Turn) -> str:
        model = endpoints.model_for(owner_of_session(agent, turn.session.id))
        settings = limits if model is chat else _hide_model_key(limits, model)
        return await run_turn(turn, model, settings)

    agent.on_fork = fork_conversation
    agent.system_prompt = True  # append and override: see system_prompt()
    agent.steer = True  # _acp2/session/steer: read before each model call (Driver)
    return agent


async def fork_conversation(source: dict[str, Any], forked: AgentSession) -> None:
    """``session/fork``: the new session goes on from a copy of the source's conversation
    with the model (its messages, plan and "always" answers), which the source keeps
    unchanged. Messages are frozen values: copying the lists is enough."""
    conversation = source.get(CONVERSATION_KEY)
    if isinstance(conversation, Conversation):
        copy = Conversation(
            list(conversation.messages), dict(conversation.policy), conversation.plan
        )
        forked.data[CONVERSATION_KEY] = copy


async def run_turn(turn: Turn, model: ChatModel, settings: CoderSettings) -> str:
    """Work on one prompt with ``model``; return the stop reason."""
    session = turn.session
    conversation = session.data.get(CONVERSATION_KEY)
    if not isinstance(conversation, Conversation):
        conversation = Conversation([Message("system", system_prompt(session))])
        session.data[CONVERSATION_KEY] = conversation
    elif conversation.messages and conversation.messages[0].role == "system":
        # A resume may have brought another client system prompt: the latest holds.
        conversation.messages[0] = Message("system", system_prompt(session))
    sandbox = Sandbox(
        session.cwd, session.additional_directories, protected=settings.protected_paths
    )
    toolbox = Toolbox(
        sandbox,
        command_timeout=settings.command_timeout,
        limits=settings.file_limits,
        command_policy=settings.commands,
    )
    text = prompt_text(turn.prompt)
    command = command_of(text)
    if command is not None:
        return await run_command(turn, command[0], conversation, model, sandbox)
    toolbox.on_change = journal_of(session.data).record  # for /diff and /undo
    await _title_once(turn, conversation, text)
    if session.mcp.configs:
        toolbox = await with_mcp(turn, toolbox, session.data.setdefault(MCP_REPORTED_KEY, set()))
    tasks = TaskRunner(
        model, toolbox, context_window=settings.context_window, max_requests=settings.max_requests
    )
    specs = (*toolbox.specs, TASK_TOOL)
    loop = coder_loop(conversation, text, specs, max_requests=settings.max_requests)
    driver = Driver(turn, model, toolbox, context_window=settings.context_window, tasks=tasks)
    try:
        return await driver.run(loop)
    finally:
        # Steering that came after the model's last call goes with the next prompt.
        for blocks in take_steering(session):
            conversation.messages.append(Message("user", prompt_text(blocks)))


def owner_of_session(agent: Agent, session_id: str) -> str | None:
    """The principal that owns live session ``session_id`` of ``agent`` (None: the local
    user, or a session no connection holds): whose provider routing its work uses."""
    from acp2.agent.runtime import runtime_for

    hub = runtime_for(agent).hubs.get(session_id)
    return hub.owner if hub is not None else None


async def _title_once(turn: Turn, conversation: Conversation, text: str) -> None:
    """Title a new session with its first prompt's first line (``session_info_update``,
    kept for ``session/list``), so session pickers show what it was about."""
    if any(message.role == "user" for message in conversation.messages):
        return
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if line:
        title = line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
        await turn.send(SessionInfoUpdate(title=title))


def _offer_mcp(agent: Agent, settings: CoderSettings) -> None:
    """Advertise stdio, HTTP, SSE and MCP-over-ACP servers when the MCP SDK is installed
    (found without importing it), stdio processes confined like commands unless opted
    out."""
    from importlib.util import find_spec

    if find_spec("mcp") is None:
        return
    agent.mcp_stdio = agent.mcp_http = agent.mcp_sse = agent.mcp_acp = True
    launcher = sandbox_launcher(settings.commands) if settings.mcp_sandbox else None
    agent.mcp_options = replace(settings.mcp, launcher=settings.mcp.launcher or launcher)


def _hide_model_key(settings: CoderSettings, chat: ChatModel) -> CoderSettings:
    """``settings`` with the model's API key (when it has one) among the values no
    command may see in its environment."""
    key = getattr(getattr(chat, "config", None), "api_key", None)
    if not isinstance(key, str) or not key or key in settings.commands.secrets:
        return settings
    commands = replace(settings.commands, secrets=(*settings.commands.secrets, key))
    return replace(settings, commands=commands)


def system_prompt(session: AgentSession) -> str:
    """The instructions the model gets: the agent's own, with the client's system prompt
    appended, or the client's alone in ``override`` mode (:mod:`acp2.agent.system_prompt`)."""
    client = system_prompt_of(session)
    if client is not None and client[0] == "override":
        return client[1]
    own = default_instructions(session)
    return f"{own}\n\n{client[1]}" if client is not None and client[1] else own


def default_instructions(session: AgentSession) -> str:
    """The coding agent's own instructions for ``session``."""
    extra = session.additional_directories
    roots = f" Other directories you may use: {', '.join(extra)}." if extra else ""
    return (
        "You are a careful coding agent working in the user's project at "
        f"{session.cwd}.{roots} Use the tools to look at files before changing them; paths "
        "are relative to the project root and must stay inside the workspace. Prefer small "
        "edits with edit_file. For work with several steps, show a plan with update_plan "
        "and keep it current. Run the project's tests with run_command when you change "
        "code. Answer briefly; when you are done, say what you changed."
    )


def prompt_text(prompt: Sequence[Any]) -> str:
    """The prompt's content blocks as text for the model (resources inlined as files)."""
    parts = []
    for block in prompt:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource.text, str):
            parts.append(f"Attached {block.resource.uri}:\n```\n{block.resource.text}\n```")
        elif isinstance(block, ResourceLink):
            parts.append(f"Attached link: {block.uri}")
    return "\n\n".join(parts)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acp2")
    except PackageNotFoundError:  # running from a bare checkout
        return "0.0.0"
