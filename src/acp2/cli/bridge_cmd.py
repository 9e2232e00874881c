"""``acp2 bridge``: a stdio proxy that lets an ACP v1 peer and an ACP v2 peer talk.

::

    acp2 bridge [--log FILE] [--fs] [--terminal] -- AGENT_COMMAND...

Run it as the agent command of any client. It starts the agent (its own process group,
stderr drained), reads the client's ``initialize`` and the agent's answer, and then
passes frames through unchanged (same version) or translates (v1 client and v2 agent,
or v2 client and v1 agent): :mod:`acp2.bridge.runner`.

Exit status: 0 when the client closed its end; when the agent went away first, its exit
status (128 + N when killed by signal N), or 1 when it exited 0 or could not be read;
126 / 127 when it could not be started; 128 + N after signal N (SIGTERM, SIGINT,
SIGHUP) to the bridge. Every failure is one clear message on stderr, and a client whose
``initialize`` was read gets a JSON-RPC error for it.
"""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from acp2.bridge.runner import BridgeEnd
    from acp2.bridge.wirelog import WireLog
    from acp2.transport.base import Transport
    from acp2.transport.stdio import AgentProcess

__all__ = ["add_parser", "main"]

EXIT_AGENT_GONE: Final = 1
EXIT_USAGE: Final = 2
EXIT_CANNOT_RUN: Final = 126
EXIT_NOT_FOUND: Final = 127
#: Seconds the client may take to send ``initialize`` when the agent could not start
#: (it is owed an error answer; an editor sends it at once).
HELLO_WAIT: Final = 2.0
#: Seconds an agent whose stdout ended has to exit, so its status can be reported.
EXIT_WAIT: Final = 2.0

_EPILOG = """\
directions (picked from the two initialize messages):
  same version on both sides   frames pass through unchanged
  v1 client, v2 agent          the agent is presented as v1 (e.g. a v2 agent in Zed)
  v2 client, v1 agent          the agent is presented as v2 (e.g. Gemini CLI to a v2 client)
acp2's own agents answer v1 and v2 themselves and need no bridge.

examples:
  acp2 bridge -- node my-v2-agent.js            (register this in a v1 editor)
  acp2 bridge --fs -- gemini --acp              (a v1 agent for any v2 client)
  acp2 bridge --log /tmp/bridge.log -- AGENT    (every frame, and the agent's stderr)

With --log, the agent's stderr goes to FILE too, and nothing to the terminal.
See docs/editors.md for editor settings and debugging.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``acp2 bridge`` and its flags; return the parser."""
    from acp2.cli.run import _RunParser

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "bridge",
        help="let an ACP v1 client use a v2 agent, or a v2 client a v1 agent (stdio proxy)",
        description="Run AGENT_COMMAND behind a stdio proxy that translates between ACP v1\n"
        "and v2 when the client and the agent speak different versions.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.__class__ = _RunParser  # everything after the first "--" is the agent command
    parser.add_argument(
        "--log", metavar="FILE", help="append every frame (both ways) and the agent's stderr"
    )
    parser.add_argument(
        "--fs",
        action="store_true",
        help="serve a v1 agent's fs/* requests beneath the session's directories "
        "(writes are asked as permission requests)",
    )
    if _terminals_supported():
        parser.add_argument(
            "--terminal",
            action="store_true",
            help="serve a v1 agent's terminal/* requests (commands are asked as "
            "permission requests)",
        )
    parser.add_argument(
        "agent_command", metavar="AGENT_COMMAND", nargs=argparse.REMAINDER, help="after '--'"
    )
    return parser


def _terminals_supported() -> bool:
    # Looked up, not imported: the back bridge's v1 models cost every start-up time, and
    # a pass-through bridge never needs them. run_back checks the parameter itself.
    from importlib.util import find_spec

    return find_spec("acp2.bridge.back_terminal") is not None


def main(args: argparse.Namespace) -> int:
    """Run the bridge until the client or the agent ends; the exit status (see module)."""
    import anyio

    command = _command(args.agent_command)
    if not command:
        print("acp2 bridge: missing AGENT_COMMAND (write it after '--')", file=sys.stderr)
        return EXIT_USAGE
    try:
        log = _open_log(args.log)
    except OSError as exc:
        print(
            f"acp2 bridge: cannot write the log {args.log}: {exc.strerror or exc}", file=sys.stderr
        )
        return EXIT_USAGE
    if log is not None:
        _log_warnings_to(log)
    try:
        return anyio.run(_serve, command, args, log)
    finally:
        if log is not None:
            log.close()


def _log_warnings_to(log: WireLog) -> None:
    """With ``--log``, acp2's warnings (with ``--debug``, its debug lines too) go to the
    wire log instead of stderr (one line each, as on stderr without it), so the terminal
    -- or the editor's log -- stays quiet."""
    import logging

    from acp2.errors import summarize

    class _ToWireLog(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += f" ({summarize(record.exc_info[1])})"
            log.note(f"{record.levelname.lower()}: {text}")

    # With --debug (the root logger at DEBUG), the debug lines go there too: what the
    # bridge decoded away and which notifications it did not forward.
    root = logging.getLogger()
    root.handlers = [
        _ToWireLog(logging.DEBUG if root.isEnabledFor(logging.DEBUG) else logging.WARNING)
    ]


def _command(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else list(words)


def _open_log(path: str | None) -> WireLog | None:
    if path is None:
        return None
    from acp2.bridge.wirelog import WireLog

    return WireLog(path)


async def _serve(command: list[str], args: argparse.Namespace, log: WireLog | None) -> int:
    import anyio

    from acp2.transport.stdio import serve_stdio

    stopped: list[int] = []
    code = 0
    async with serve_stdio() as client, anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, tg.cancel_scope, stopped)
        code = await _with_agent(client, command, args, log)
        tg.cancel_scope.cancel()
    return 128 + stopped[0] if stopped else code


async def _stop_on_signal(scope: Any, stopped: list[int]) -> None:
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            stopped.append(signum)
            scope.cancel()  # leaving spawn_agent stops the agent's process group
            return


async def _with_agent(
    client: Transport, command: list[str], args: argparse.Namespace, log: WireLog | None
) -> int:
    from acp2.transport.stdio import spawn_agent

    async with AsyncExitStack() as stack:
        sink: Any = log.stderr if log is not None else sys.stderr.buffer
        try:
            agent = await stack.enter_async_context(spawn_agent(command, stderr=sink))
        except OSError as exc:
            return await _not_started(client, command, exc, log)
        return await _bridge(client, agent, command, args, log)
    raise AssertionError("unreachable")  # pragma: no cover - the stack re-raises


async def _bridge(
    client: Transport,
    agent: AgentProcess,
    command: list[str],
    args: argparse.Namespace,
    log: WireLog | None,
) -> int:
    from acp2.bridge.hello import answer_error
    from acp2.bridge.runner import AgentGone, BadAnswer, run_bridge
    from acp2.diagnose import early_exit

    try:
        end = await run_bridge(
            client,
            agent,
            files=args.fs,
            terminals=bool(getattr(args, "terminal", False)),
            log=log,
        )
    except AgentGone as gone:
        await agent.wait_exit(EXIT_WAIT)
        await agent.wait_stderr(EXIT_WAIT)
        text = early_exit(command, agent.returncode, agent.stderr_tail())
        await answer_error(client, gone.hello, f"acp2 bridge: {text.splitlines()[0]}")
        return _fail(log, text, _status(agent.returncode))
    except BadAnswer as bad:
        await answer_error(client, bad.hello, f"acp2 bridge: {bad}")
        return _fail(log, str(bad), EXIT_AGENT_GONE)
    return await _ended(end, agent, log)


async def _ended(end: BridgeEnd, agent: AgentProcess, log: WireLog | None) -> int:
    from acp2.diagnose import stderr_excerpt

    if end.first_closed == "client":
        return 0
    await agent.wait_exit(EXIT_WAIT)
    await agent.wait_stderr(EXIT_WAIT)
    status = agent.returncode
    words = "closed its stdout" if status is None else f"exited with status {status}"
    if status is not None and status < 0:
        words = f"was killed by signal {-status}"
    excerpt = stderr_excerpt(agent.stderr_tail())
    text = f"the agent {words} before the client closed the connection"
    text += f"; its stderr ended with:\n{excerpt}" if excerpt else " (nothing on stderr)"
    return _fail(log, text, _status(status))


async def _not_started(
    client: Transport, command: list[str], exc: OSError, log: WireLog | None
) -> int:
    import anyio

    from acp2.bridge.hello import answer_error, read_hello
    from acp2.diagnose import start_failure

    text = start_failure(command, exc)
    with anyio.move_on_after(HELLO_WAIT):
        hello = await read_hello(client)
        if hello is not None:
            await answer_error(client, hello, f"acp2 bridge: {text}")
    code = EXIT_NOT_FOUND if isinstance(exc, FileNotFoundError) else EXIT_CANNOT_RUN
    return _fail(log, text, code)


def _status(returncode: int | None) -> int:
    if returncode is None or returncode == 0:
        return EXIT_AGENT_GONE
    return 128 - returncode if returncode < 0 else returncode


def _fail(log: WireLog | None, text: str, code: int) -> int:
    if log is not None:
        log.note(text)
    print(f"acp2 bridge: {text}", file=sys.stderr)
    return code
