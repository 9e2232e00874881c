"""``acp2 check [options] -- AGENT_COMMAND...``: the ACP conformance checker (v2, and v1
for agents that answer protocol version 1).

Exit status: 0 when the agent is CONFORMANT under the selected draft (no MUST and no
advertised-capability row failed), 1 when it is not, 2 when the check could not run
(no agent command, the command cannot be started, ``jsonschema`` missing).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "main"]

DESCRIPTION = """\
Check an ACP agent for conformance. The agent is started as a subprocess (a fresh one
per probe where isolation matters) and spoken to over stdio. An agent that answers
initialize with protocol version 1 is judged as ACP v1 (the V1- rows; --draft then does
not apply), and the report says so. Each row names a requirement
(its id, in acp2's requirement list, and the rule itself) and says PASS, FAIL or SKIP with
the reason; failures show the offending frames. The verdict counts MUST rows and rows of
capabilities the agent advertises (CAP).
"""

EPILOG = """\
examples:
  acp2 check -- my-agent --stdio
  acp2 check --draft preview --json report.json -- node dist/agent.js
  acp2 check --prompt "echo hello" --cancel-prompt wait --permission-prompt permission \\
      -- acp2 test-agent
  acp2 check --url http://127.0.0.1:8765/acp   (a remote agent: the probes that need
      a local process or send bytes that are not JSON-RPC are not run)
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to ``subparsers`` (from ``add_subparsers()``); return it."""
    from acp2.check.options import (
        DEFAULT_CANCEL_PROMPT,
        DEFAULT_PERMISSION_PROMPT,
        DEFAULT_PROMPT,
    )
    from acp2.check.probes import PROBES
    from acp2.check.requirements import DRAFTS

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check an ACP agent (v2, or v1) for conformance",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add(
        "--draft",
        choices=DRAFTS,
        default="preview",
        help="judge against the ACP v2 Preview (preview, 2026-11-20, modelled from the "
        "SDK 2.4.0 schemas and the Preview pages: the default), the TypeScript SDK 2.4.0 "
        "(nov, Nov 2026) or ACP v2 alpha.3 (aug, Aug 2026)",
    )
    add("--json", metavar="FILE", help="also write the report as JSON to FILE")
    add(
        "--timeout",
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="bound for every wait on the agent (default: 6 times the agent's measured "
        "start-up time, at least 10, at most 120)",
    )
    add(
        "--prompt",
        default=DEFAULT_PROMPT,
        help=f"prompt for normal turns (default: {DEFAULT_PROMPT!r})",
    )
    add(
        "--cancel-prompt",
        default=DEFAULT_CANCEL_PROMPT,
        help="a prompt that keeps the agent busy long enough to cancel it",
    )
    add(
        "--permission-prompt",
        default=DEFAULT_PERMISSION_PROMPT,
        help="a prompt that makes the agent ask for permission (rows are skipped if it never "
        "does; the checker always answers with a reject option)",
    )
    add(
        "--auth",
        metavar="METHOD_ID",
        help="log in with this advertised auth method after each initialize (auth/login; "
        "v1: authenticate); the method's credentials come from the environment",
    )
    add("--cwd", metavar="DIR", help="session directory (default: a fresh temporary directory)")
    add(
        "--only",
        action="append",
        choices=sorted(PROBES),
        metavar="PROBE",
        help="run only this probe (repeatable): " + ", ".join(PROBES),
    )
    add(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="agent processes at once (default: the CPU count)",
    )
    add("--plain", action="store_true", help="plain-text table even when rich is installed")
    from acp2.cli.run import add_remote_options

    add_remote_options(parser)
    from acp2.cli.mcp_opts import add_mcp_options

    add_mcp_options(parser)
    add("--verbose", "-v", action="store_true", help="show the reason of passing rows too")
    add(
        "agent",
        nargs=argparse.REMAINDER,
        metavar="-- AGENT_COMMAND...",
        help="the agent command line, after --",
    )
    return parser


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def main(args: argparse.Namespace) -> int:
    """Run the check described by parsed ``args``; print the report; return the exit code."""
    import anyio

    from acp2.check import CheckError, CheckOptions, MissingJsonschema, run_check
    from acp2.check.render import print_report

    argv = list(args.agent or [])
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if bool(argv) == (args.url is not None):
        print(
            "acp2 check: give the agent command after -- (e.g. acp2 check -- my-agent), "
            "or --url URL",
            file=sys.stderr,
        )
        return 2
    from acp2 import sanitize
    from acp2.cli.mcp_opts import mcp_servers_of
    from acp2.errors import McpConfigError
    from acp2.schema.codec import to_builtins

    try:
        servers = [to_builtins(server) for server in mcp_servers_of(args)]
    except McpConfigError as exc:
        print(f"acp2 check: {sanitize.line(str(exc))}", file=sys.stderr)
        return 2
    options = CheckOptions(
        mcp_servers=servers,
        argv=argv,
        draft=args.draft,
        timeout=args.timeout,
        prompt=args.prompt,
        cancel_prompt=args.cancel_prompt,
        permission_prompt=args.permission_prompt,
        cwd=args.cwd,
        only=frozenset(args.only) if args.only else None,
        jobs=args.jobs,
        auth=args.auth,
        url=args.url,
        token=args.token,
    )
    try:
        report = anyio.run(run_check, options)
    except (MissingJsonschema, CheckError) as exc:
        print(f"acp2 check: {exc}", file=sys.stderr)
        return 2
    print_report(report, plain=args.plain, verbose=args.verbose)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report.to_json(), f, indent=2, ensure_ascii=False)
            f.write("\n")
    return 0 if report.conformant else 1


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv`` as ``acp2 check`` arguments and run (for tests and ``python -m``)."""
    parser = argparse.ArgumentParser(prog="acp2")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return main(parser.parse_args(["check", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
