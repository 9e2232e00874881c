"""``acp2 agent``: the built-in coding agent, served on stdio."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_parser", "main"]

_EPILOG = """\
models:
  scripted  an offline, deterministic model (the default): it looks around the
            workspace, plans, proposes an edit and runs the tests -- every part of
            the prompt lifecycle, with no network. On the sample project of
            `acp2 demo` it finds and fixes a real bug.
  openai    any OpenAI-compatible chat-completions server: OpenAI, vLLM, Ollama,
            llama.cpp, LM Studio, OpenRouter...  Chosen automatically when
            --base-url or --model-name is given.

environment:
  OPENAI_API_KEY, ACP2_API_KEY   API key (when neither --api-key nor --api-key-file)
  OPENAI_BASE_URL                base URL (default https://api.openai.com/v1)
  ACP2_MODEL_NAME, OPENAI_MODEL  model name (default gpt-4o-mini)
  ACP2_MODEL                     scripted or openai (when --model is not given)

commands (run_command):
  run with a scrubbed environment (no API keys or tokens; see --command-env), in
  bubblewrap when it works here, else under Landlock, else unconfined -- the
  permission prompt says which. Sandboxed commands may write only in the session's
  directories and a private /tmp, cannot read your home, and have no network unless
  --command-network. See docs/sandbox.md.

register it in an editor (it answers ACP v1 and v2 on stdio), e.g. Zed's settings.json:
  "agent_servers": {
    "acp2": {
      "type": "custom",
      "command": "/absolute/path/to/acp2",
      "args": ["agent", "--model", "openai", "--model-name", "gpt-4o-mini"],
      "env": {"OPENAI_API_KEY": "sk-..."}
    }
  }
a local server:
  acp2 agent --base-url http://127.0.0.1:11434/v1 --model-name qwen2.5-coder
try it from a terminal:
  acp2 chat -- acp2 agent

JetBrains and Neovim (CodeCompanion) settings, `acp2 bridge` for agents that speak
only one ACP version, and debugging: docs/editors.md
"""


_NUMBERS: tuple[tuple[str, type, Any, str, str], ...] = (
    ("--max-tokens", int, None, "N", "output tokens per model request"),
    ("--temperature", float, None, "T", "sampling temperature"),
    ("--retries", int, 4, "N", "retries on HTTP 429/5xx and connection failures (default 4)"),
    ("--context-window", int, 128_000, "TOKENS", "context size in usage updates (default 128000)"),
    ("--max-requests", int, 50, "N", "model requests per prompt before stopping (default 50)"),
    ("--command-timeout", float, 120.0, "SECONDS", "time limit of a command (default 120)"),
    ("--pace", float, 0.02, "SECONDS", "scripted model: delay between words (default 0.02)"),
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``acp2 agent`` and its flags; return the parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "agent",
        help="the built-in coding agent, on stdio",
        description=(
            "Serve the built-in coding agent (ACP v2) on stdin/stdout. It reads, searches\n"
            "and edits files and runs commands in the session's directories, asking\n"
            "permission before every write and command."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model",
        choices=("scripted", "openai"),
        default=None,
        help="which model drives the agent (default: $ACP2_MODEL, else scripted)",
    )
    parser.add_argument("--base-url", metavar="URL", help="OpenAI-compatible API base URL")
    parser.add_argument("--model-name", metavar="NAME", help="model name sent to the server")
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help="API key; taken off the command line at start-up (the agent re-executes"
        " itself without it), but prefer OPENAI_API_KEY or --api-key-file",
    )
    parser.add_argument(
        "--api-key-file", metavar="PATH", help="read the API key from this file, once"
    )
    parser.add_argument(
        "--login",
        action="store_true",
        help="terminal login: type the API key, store it privately (keyring or a 0600"
        " file) for later starts, and exit",
    )
    for flag, kind, default, metavar, text in _NUMBERS:
        parser.add_argument(flag, type=kind, default=default, metavar=metavar, help=text)
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        help="session history: a SQLite file, or a postgresql:// URL shared by several"
        " agent processes or nodes (default: a per-user SQLite file)",
    )
    _add_command_flags(parser)
    return parser


def _add_command_flags(parser: argparse.ArgumentParser) -> None:
    from acp2.coder.tools.confine import SANDBOXES

    parser.add_argument(
        "--command-sandbox",
        choices=SANDBOXES,
        default="auto",
        help="how commands are confined (default auto: bubblewrap, else Landlock, else none)",
    )
    parser.add_argument(
        "--command-network",
        action="store_true",
        help="let sandboxed commands use the network (e.g. for pip install)",
    )
    parser.add_argument(
        "--command-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this environment variable to commands too (repeatable; names that "
        "look like secrets are refused)",
    )
    parser.add_argument(
        "--command-read",
        action="append",
        default=[],
        metavar="PATH",
        help="let sandboxed commands read this host path (repeatable), e.g. a toolchain",
    )
    parser.add_argument(
        "--mcp-unsandboxed",
        action="store_true",
        help="run the client's stdio MCP servers outside the command sandbox (default: "
        "inside it, like commands; see docs/mcp.md)",
    )


def choose_model(args: argparse.Namespace, env: Any = None) -> str:
    """``--model``, else ``$ACP2_MODEL``, else ``openai`` if a base URL or model name was
    given on the command line, else ``scripted``."""
    env = os.environ if env is None else env
    if args.model:
        return str(args.model)
    if env.get("ACP2_MODEL"):
        return str(env["ACP2_MODEL"])
    return "openai" if args.base_url or args.model_name else "scripted"


def model_options(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The keyword options of :func:`acp2.coder.providers.make_model` for ``kind``."""
    if kind == "scripted":
        return {"pace": max(args.pace, 0.0)}
    return {
        "model_name": args.model_name,
        "base_url": args.base_url,
        "api_key": args.api_key,
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        "max_retries": max(args.retries, 0),
    }


def main(args: argparse.Namespace) -> int:
    """Serve the coding agent until stdin closes (0) or a stop signal (128 + its number),
    leaving no command running; 2 on a configuration error (an unusable store
    included); 1 when updates could not be stored by the end (said on stderr)."""
    from acp2.cli.api_key import take_api_key
    from acp2.coder import CoderSettings, build_coder_agent
    from acp2.sanitize import line

    problem = take_api_key(args)  # first: the key leaves argv before anything else runs
    if problem:
        print(f"acp2 agent: {line(problem)}", file=sys.stderr)
        return 2
    if args.login:
        from acp2.cli.agent_login import terminal_login

        return terminal_login()
    kind = choose_model(args)
    if kind not in ("scripted", "openai"):
        print(f"acp2 agent: unknown model {kind!r} (scripted or openai)", file=sys.stderr)
        return 2
    problem = _check_openai(args) if kind == "openai" else None
    if problem:
        print(f"acp2 agent: {problem}", file=sys.stderr)
        return 2
    from acp2.cli.store_check import store_at_exit, store_at_start
    from acp2.coder.lifetime import serve_until_stopped

    agent = build_coder_agent(
        kind,
        settings=CoderSettings(
            max_requests=max(args.max_requests, 1),
            context_window=max(args.context_window, 1),
            command_timeout=max(args.command_timeout, 0.1),
            commands=command_policy(args),
            mcp_sandbox=not args.mcp_unsandboxed,
        ),
        store=args.store,
        **model_options(args, kind),
    )
    if kind == "openai":
        _add_login(agent, args)
    problem = store_at_start(agent)  # now: an unusable store is a configuration error
    if problem:
        print(f"acp2 agent: {problem}", file=sys.stderr)
        return 2
    status = serve_until_stopped(agent)
    lost = store_at_exit(agent)
    if lost:
        print(f"acp2 agent: {lost}", file=sys.stderr)
    return 1 if lost and status == 0 else status


def command_policy(args: argparse.Namespace, env: Any = None) -> Any:
    """The :class:`~acp2.coder.tools.confine.CommandPolicy` of the flags; the provider's
    API key (flag, file or environment) and the values of the environment's
    secret-looking variables are among its secrets. Secret-looking ``--command-env``
    names are refused with a warning."""
    from acp2.coder.tools.command_env import environment_secrets, looks_secret
    from acp2.coder.tools.confine import CommandPolicy

    env = os.environ if env is None else env
    names = []
    for name in getattr(args, "command_env", None) or []:
        if looks_secret(name):
            print(f"acp2 agent: not passing {name} to commands (it looks secret)", file=sys.stderr)
        else:
            names.append(name)
    secrets = [args.api_key or "", env.get("OPENAI_API_KEY", ""), env.get("ACP2_API_KEY", "")]
    secrets += environment_secrets(env)
    return CommandPolicy(
        sandbox=getattr(args, "command_sandbox", "auto"),
        network=bool(getattr(args, "command_network", False)),
        env=tuple(names),
        read_only=tuple(getattr(args, "command_read", None) or []),
        secrets=tuple(s for s in secrets if s),
    )


def _check_openai(args: argparse.Namespace) -> str | None:
    """A configuration that cannot work, said before serving (None when it may work)."""
    try:
        from acp2.coder.providers.openai import DEFAULT_BASE_URL, OpenAIConfig
    except ImportError:
        return "--model openai needs httpx: pip install -e '.[llm]' in the acp2 checkout"
    if not args.api_key and not _environment_key():
        from acp2.coder.credentials import stored_key

        args.api_key = stored_key()  # what an earlier terminal login stored
    config = OpenAIConfig.from_env(
        model=args.model_name, base_url=args.base_url, api_key=args.api_key
    )
    args.signed_in = bool(config.api_key) or config.base_url != DEFAULT_BASE_URL
    return None


def _environment_key() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("ACP2_API_KEY"))


def _add_login(agent: Any, args: argparse.Namespace) -> None:
    """Advertise the terminal login; without a key, say on stderr what sessions need."""
    from acp2.cli.agent_login import auth_methods

    signed_in = bool(getattr(args, "signed_in", True))
    agent.auth_methods.extend(auth_methods(signed_in))
    if not signed_in:
        print(
            "acp2 agent: no API key (OPENAI_API_KEY, --api-key-file or a stored one): "
            "sessions wait for the terminal login, acp2 agent --login",
            file=sys.stderr,
        )


if __name__ == "__main__":  # pragma: no cover - python -m acp2.cli.agent_cmd
    from acp2.cli.main import main as acp2_main

    sys.exit(acp2_main(["agent", *sys.argv[1:]]))
