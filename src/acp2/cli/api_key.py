"""Keeping ``acp2 agent``'s API key out of its command line.

``/proc/<pid>/cmdline`` is readable by every user, and by every command the model runs
outside bubblewrap's pid namespace, so a key given as ``--api-key KEY`` would be readable
by the model for as long as the agent runs. :func:`take_api_key` therefore moves it out
at once: the process re-executes itself with the same command line less the key, and the
key travels through an inherited pipe (its descriptor number in :data:`KEY_FD_ENV`), read
once and closed. The pid, stdin and stdout stay the same, so the editor that started the
agent sees nothing of it. Refusing the flag would break every configuration using it.

``--api-key-file PATH`` reads the key from a file once; ``OPENAI_API_KEY`` /
``ACP2_API_KEY`` in the environment need nothing (``/proc/<pid>/environ`` is private to
the user, and the agent is non-dumpable: see :mod:`acp2.coder.lifetime`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["KEY_FD_ENV", "MAX_KEY_BYTES", "reexec_early", "take_api_key", "without_key"]

#: The environment variable naming the pipe a re-executed agent reads its key from.
KEY_FD_ENV = "ACP2_API_KEY_FD"
#: The longest key accepted (a pipe holds it without blocking the writer).
MAX_KEY_BYTES = 16384
_FLAG = "--api-key"


def take_api_key(args: argparse.Namespace) -> str | None:
    """Settle ``args.api_key``: from the pipe of a re-execution, else (when it is on the
    command line) re-execute without it -- this call then does not return -- else from
    ``--api-key-file``. Returns a problem to report (exit 2), or None."""
    if KEY_FD_ENV in os.environ:
        args.api_key = _read_pipe(os.environ.pop(KEY_FD_ENV))
        return None if args.api_key else "the API key passed by the re-execution was lost"
    if args.api_key:
        return _reexec_without(args.api_key)
    if getattr(args, "api_key_file", None):
        return _read_key_file(args)
    return None


def reexec_early(args: Sequence[str]) -> None:
    """Before any parser is built: for ``agent ... --api-key KEY`` (or ``--api-key=KEY``)
    on this process's own command line, re-execute without it now (building the agent's
    parser imports much of acp2, which the re-execution would otherwise pay twice).
    Abbreviations of the flag are left to :func:`take_api_key`."""
    if not args or args[0] != "agent" or KEY_FD_ENV in os.environ:
        return
    end = args.index("--") if "--" in args else len(args)
    for index, arg in enumerate(args[:end]):
        if arg.startswith(_FLAG + "="):
            _reexec_without(arg[len(_FLAG) + 1 :])
        elif arg == _FLAG and index + 1 < end:
            _reexec_without(args[index + 1])


def without_key(argv: Sequence[str], key: str) -> list[str] | None:
    """``argv`` less every ``--api-key KEY`` / ``--api-key=KEY`` (or an abbreviation of
    the flag); None when the key is not there."""
    kept: list[str] = []
    skip = False
    for index, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        flag, sep, value = arg.partition("=")
        if _is_flag(flag) and sep and value == key:
            continue
        if _is_flag(arg) and index + 1 < len(argv) and argv[index + 1] == key:
            skip = True
            continue
        kept.append(arg)
    return kept if len(kept) < len(argv) else None


def _is_flag(arg: str) -> bool:
    return len(arg) > len("--a") and _FLAG.startswith(arg)


def _reexec_without(key: str) -> str | None:
    data = key.encode()
    argv = without_key(sys.orig_argv, key)
    if argv is None:  # not from this process's command line (called in-process)
        return None
    if len(data) > MAX_KEY_BYTES or any(key in arg for arg in argv):
        return (
            "cannot take --api-key off the command line; set OPENAI_API_KEY or use --api-key-file"
        )
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {**os.environ, KEY_FD_ENV: str(read_end)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *argv[1:]], env)


def _read_pipe(fd_text: str) -> str:
    """The key in the pipe ``fd_text`` names (read to its end, then closed)."""
    if not (fd_text.isascii() and fd_text.isdigit()):
        return ""
    fd, chunks = int(fd_text), []
    try:
        while chunk := os.read(fd, MAX_KEY_BYTES + 1):
            chunks.append(chunk)
        os.close(fd)
    except OSError:
        return ""
    return b"".join(chunks).decode("utf-8", "replace")


def _read_key_file(args: argparse.Namespace) -> str | None:
    path = str(args.api_key_file)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_KEY_BYTES + 1)
    except OSError as exc:
        return f"cannot read --api-key-file {path!r}: {exc.strerror or exc}"
    key = data.decode("utf-8", "replace").strip()
    if not key or len(data) > MAX_KEY_BYTES:
        return f"--api-key-file {path!r} must hold one key (up to {MAX_KEY_BYTES} bytes)"
    args.api_key = key
    return None
