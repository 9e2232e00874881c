"""``acp2``: the entry point. Each subcommand lives in its own module, imported lazily so
``acp2 --help`` and the agents start fast.

An unexpected exception in any subcommand is reported in one line with a hint to re-run
with ``--debug`` (exit status 70), and the client commands log warnings as single lines
without tracebacks; ``--debug`` (anywhere before ``--``) shows the traceback instead and
turns on debug logging.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["EXIT_INTERNAL", "build_parser", "main"]

#: Exit status for an unexpected error (a bug in acp2): sysexits' EX_SOFTWARE.
EXIT_INTERNAL: Final = 70
#: Subcommands that are agents: their stderr is their log for whoever started them, so
#: their logging is left as it is (tracebacks included).
AGENT_COMMANDS: Final = frozenset({"agent", "test-agent"})

#: subcommand -> (module, one-line help). Each module has add_parser(subparsers) and main(args).
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("acp2.cli.demo", "see the whole prompt lifecycle: chat with the built-in agent"),
    "chat": ("acp2.cli.chat", "chat with any ACP v2 agent in the terminal"),
    "run": ("acp2.cli.run", "send one prompt to an agent and print the reply (scripting, CI)"),
    "agent": ("acp2.cli.agent_cmd", "the built-in coding agent, on stdio"),
    "test-agent": ("acp2.cli.test_agent", "a deterministic agent for testing clients, on stdio"),
    "agents": ("acp2.cli.agents_cmd", "list, search and show the agents of the ACP registry"),
    "check": ("acp2.cli.check_cmd", "check an ACP v2 agent for conformance"),
    "serve": (
        "acp2.cli.serve_cmd",
        "host an ACP agent over Streamable HTTP and WebSocket (remote ACP)",
    ),
    "bridge": (
        "acp2.cli.bridge_cmd",
        "let an ACP v1 client use a v2 agent, or a v2 client a v1 agent (stdio proxy)",
    ),
}


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """Build the parser; only the module of the chosen subcommand is imported."""
    parser = argparse.ArgumentParser(
        prog="acp2",
        description="The Agent Client Protocol, version 2: agents, clients and tools.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks and debug logs (also accepted after the subcommand, before --)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in COMMANDS.items():
        if name == chosen:
            importlib.import_module(module).add_parser(subparsers)
        else:
            subparsers.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acp2`` command line; return the process exit code."""
    args_list, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    if args_list == ["--login"]:
        # A client that *replaces* the agent's arguments with a terminal auth method's
        # (as the ACP registry describes it) runs `acp2 --login`: the coding agent's login.
        args_list = ["agent", "--login"]
    # The key of `acp2 agent --api-key KEY` leaves argv first of all (the module is loaded
    # only when the flag may be there: every other command starts without it).
    if argv is None and args_list[:1] == ["agent"] and any("--api" in a for a in args_list):
        from acp2.cli.api_key import reexec_early

        reexec_early(args_list)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    debug = debug or args.debug
    if args.command is None:
        parser.print_help()
        return 2
    if debug:
        _debug_logging()
    elif args.command not in AGENT_COMMANDS:
        _one_line_logging()
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.main(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            raise
        _report_internal(args.command, exc)
        return EXIT_INTERNAL


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Remove ``--debug`` written anywhere before ``--`` (so ``acp2 run --debug ...``
    works as well as ``acp2 --debug run ...``); return the rest and whether it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    head = [a for a in argv[:end] if a != "--debug"]
    return head + argv[end:], len(head) < end


def _debug_logging() -> None:
    logging.basicConfig(
        level=logging.DEBUG, format="%(asctime)s %(name)s %(levelname)s: %(message)s"
    )


class _OneLineFormatter(logging.Formatter):
    """``acp2: message (ExceptionType: first line)``: no traceback, no control characters."""

    def format(self, record: logging.LogRecord) -> str:
        from acp2.diagnose import sanitize
        from acp2.errors import summarize

        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({summarize(record.exc_info[1])}; --debug shows the traceback)"
        return "acp2: " + sanitize(text)


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it). Marked as the
    sanitized stderr handler (``acp2.ui.logs.SAFE_HANDLER``), so the chat adds no second."""

    acp2_safe_stderr = True

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def _one_line_logging() -> None:
    """Warnings and errors as single lines on stderr (the default without ``--debug``)."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, _OneLineFormatter) for h in root.handlers):
        return
    handler = _StderrHandler()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_OneLineFormatter())
    root.addHandler(handler)


def _report_internal(command: str, exc: BaseException) -> None:
    """One line about an unexpected error, and what to do next."""
    from acp2._groups import leaves
    from acp2.diagnose import sanitize
    from acp2.errors import summarize

    exc = leaves(exc)[0]
    print(
        f"acp2 {command}: unexpected error: {sanitize(summarize(exc))}\n"
        f"This is a bug in acp2; re-run with --debug to see the traceback "
        f"(acp2 --debug {command} ...) and include it when you report it.",
        file=sys.stderr,
    )


class _VersionAction(argparse.Action):
    """``--version``: the installed version is looked up only when asked for (reading the
    package metadata costs ~40 ms, which every agent start would pay otherwise)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(f"acp2 {_version()}\n")  # where argparse's own action prints it
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acp2")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
