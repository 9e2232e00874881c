"""Confining ``run_command``: bubblewrap, else Landlock, else nothing -- and saying which.

:class:`CommandPolicy` is what the user chose (``acp2 agent --command-sandbox``,
``--command-network``, ``--command-env``, ``--command-read``). :func:`choose` turns it into a
:class:`Confinement` this machine can give (probing once), whose :meth:`~Confinement.describe`
goes into the permission prompt. :func:`plan_launch` builds what to execute for one command:
argv, environment (see :mod:`acp2.coder.tools.command_env`), steps for the child before
``exec``, and a cleanup. ``docs/sandbox.md`` says exactly what each mode guarantees.

- ``bubblewrap``: new user, pid, ipc, uts (and, without network, net) namespaces; no
  capabilities; a read-only view of the system directories (:data:`SYSTEM_DIRS`, with
  :data:`HIDDEN` masked), the session's directories read-write, a private ``/tmp`` and an
  empty private home; nothing else of the host (no ``/home``, ``/root``, ``/run``, ``/var``).
- ``landlock``: the same write limits through the kernel's Landlock LSM (reads allowed
  only beneath system directories and the session's), a private temporary directory as
  ``TMPDIR`` and ``HOME``; no TCP without network (ABI 4+); signals scoped (ABI 6+).
- ``none``: the command runs as the agent's user, with a scrubbed environment only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from acp2.coder.tools import landlock
from acp2.coder.tools.command_env import command_env

__all__ = [
    "SANDBOXES",
    "CommandPolicy",
    "Confinement",
    "Launch",
    "choose",
    "plan_launch",
]

#: The values of ``CommandPolicy.sandbox``.
SANDBOXES = ("auto", "bubblewrap", "landlock", "none")
#: Host directories a confined command may read (when they exist).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
#: Files and directories inside :data:`SYSTEM_DIRS` that bubblewrap masks.
HIDDEN = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh")
#: Device files a command under Landlock may write.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
_SHELL = "/bin/sh"


@dataclass(frozen=True)
class CommandPolicy:
    """How commands run: ``sandbox`` (one of :data:`SANDBOXES`), ``network`` allowed,
    ``env`` extra variable names passed through, ``read_only`` extra host paths readable
    in the sandbox, and ``secrets`` (values no command may see, e.g. the API key)."""

    sandbox: str = "auto"
    network: bool = False
    env: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    secrets: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class Confinement:
    """What a command will get: ``kind`` is ``bubblewrap``, ``landlock``, ``none`` or
    ``refused`` (a required sandbox is missing); ``network`` is ``blocked``, ``allowed``,
    ``tcp-blocked`` or ``unrestricted``; ``reason`` says why there is no sandbox."""

    kind: str
    network: str = "allowed"
    reason: str = ""

    @property
    def sandboxed(self) -> bool:
        """True when the command runs inside a sandbox."""
        return self.kind in ("bubblewrap", "landlock")

    def describe(self) -> str:
        """One line for the permission prompt, e.g. ``sandboxed: bubblewrap (...)``."""
        if self.kind == "bubblewrap":
            where = "writes limited to the project and a private /tmp, home hidden"
            return f"sandboxed: bubblewrap ({where}, {_NET_TEXT[self.network]})"
        if self.kind == "landlock":
            where = "writes limited to the project and a private temp dir, home unreadable"
            return f"sandboxed: Landlock ({where}, {_NET_TEXT[self.network]})"
        if self.kind == "refused":
            return f"NOT run: {self.reason}"
        return f"NOT sandboxed: {self.reason}; it can read, write and connect as you can"


_NET_TEXT = {
    "blocked": "no network",
    "allowed": "network allowed",
    "tcp-blocked": "no TCP network",
    "unrestricted": "network not restricted by this kernel",
}


@dataclass
class Launch:
    """How to start one command: ``argv``, ``env``, ``child_steps`` to call in the child
    before exec, and ``cleanup`` to call once it has ended (or failed to start)."""

    argv: list[str]
    env: dict[str, str]
    child_steps: tuple[Callable[[], None], ...] = ()
    cleanup: Callable[[], None] = lambda: None


def choose(policy: CommandPolicy) -> Confinement:
    """The confinement this machine gives for ``policy`` (bubblewrap is probed once)."""
    return _choose(policy.sandbox, policy.network)


@functools.lru_cache(maxsize=8)
def _choose(sandbox: str, network: bool) -> Confinement:
    if sandbox == "none":
        return Confinement("none", reason="sandboxing is turned off (--command-sandbox none)")
    bwrap_problem = _bwrap_problem(network) if sandbox in ("auto", "bubblewrap") else "not asked"
    if bwrap_problem is None:
        return Confinement("bubblewrap", "allowed" if network else "blocked")
    abi = landlock.abi_version() if sandbox in ("auto", "landlock") else 0
    if abi:
        return Confinement("landlock", _landlock_network(abi, network))
    if sandbox == "bubblewrap":
        return Confinement("refused", reason=f"bubblewrap was required but {bwrap_problem}")
    if sandbox == "landlock":
        return Confinement("refused", reason="Landlock was required but this kernel lacks it")
    return Confinement("none", reason=f"{bwrap_problem}, and this kernel has no Landlock")


def _landlock_network(abi: int, network: bool) -> str:
    if network:
        return "allowed"
    return "tcp-blocked" if abi >= 4 else "unrestricted"


def _bwrap_problem(network: bool) -> str | None:
    """None when bubblewrap runs here with our namespaces, else why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed"
    probe = [bwrap, *_namespaces(network), "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc})"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot create its namespaces here ({detail[-1] if detail else '?'})"
    return None


def _namespaces(network: bool) -> list[str]:
    flags = ["--die-with-parent", "--unshare-user", "--cap-drop", "ALL", "--unshare-pid"]
    flags += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    return flags if network else [*flags, "--unshare-net"]


def plan_launch(
    confinement: Confinement,
    policy: CommandPolicy,
    command: str,
    *,
    cwd: str,
    roots: Sequence[str],
    source_env: Mapping[str, str] | None = None,
) -> Launch:
    """What to execute for ``command`` in ``cwd`` with write access to ``roots``."""
    source = os.environ if source_env is None else source_env
    shell = [_SHELL, "-c", command]
    if confinement.kind == "bubblewrap":
        home = source.get("HOME", "")
        env = _env(source, policy, cwd, {"TMPDIR": "/tmp"})
        argv = bwrap_argv(policy, cwd=cwd, roots=roots, home=home)
        return Launch([*argv, "--", *shell], env)
    if confinement.kind == "landlock":
        return _landlock_launch(policy, shell, cwd, roots, source)
    return Launch(shell, _env(source, policy, cwd, {}))


def _env(
    source: Mapping[str, str], policy: CommandPolicy, cwd: str, overrides: dict[str, str]
) -> dict[str, str]:
    return command_env(
        source, cwd=cwd, extra=policy.env, secrets=policy.secrets, overrides=overrides
    )


def bwrap_argv(policy: CommandPolicy, *, cwd: str, roots: Sequence[str], home: str) -> list[str]:
    """The ``bwrap`` command line (up to ``--``) for a command in ``cwd``."""
    argv = [shutil.which("bwrap") or "bwrap", *_namespaces(policy.network), *_system_mounts()]
    if policy.network and os.path.isdir("/run/systemd/resolve"):
        argv += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if _private_home(home, roots):
        argv += ["--tmpfs", home]
    for path in readable_extras(policy, home):
        argv += ["--ro-bind", path, path]
    for root in roots:
        argv += ["--bind", root, root]
    return [*argv, "--remount-ro", "/", "--chdir", os.path.realpath(cwd)]


def _system_mounts() -> list[str]:
    """The system directories read-only (symlinks as symlinks), :data:`HIDDEN` masked."""
    argv: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for path in HIDDEN:
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
        elif os.path.lexists(path):
            argv += ["--ro-bind", "/dev/null", path]
    return argv


def readable_extras(policy: CommandPolicy, home: str) -> list[str]:
    """Host paths readable besides the system: ``policy.read_only`` and the agent's own
    Python installation (so a command can run the interpreter the agent runs on), as real
    paths that exist -- never the whole home directory or ``/``."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    home_real = os.path.realpath(home) if home else ""
    found: list[str] = []
    for path in (*policy.read_only, *sorted(prefixes)):
        real = os.path.realpath(os.path.expanduser(path))
        if not os.path.exists(real) or real in found or real == "/":
            continue
        if path not in policy.read_only and home_real.startswith(real.rstrip("/") + "/"):
            continue  # an interpreter prefix containing the home directory
        if path not in policy.read_only and real == home_real:
            continue
        found.append(real)
    return found


def _private_home(home: str, roots: Sequence[str]) -> bool:
    """True when ``home`` should be an empty tmpfs (not /, not a system dir, not a root)."""
    if not os.path.isabs(home) or os.path.realpath(home) == "/":
        return False
    real = os.path.realpath(home)
    covered = (*SYSTEM_DIRS, "/tmp", "/proc", "/dev", *roots)
    return not any(real == c or real.startswith(c.rstrip("/") + "/") for c in covered)


def _landlock_launch(
    policy: CommandPolicy,
    shell: list[str],
    cwd: str,
    roots: Sequence[str],
    source: Mapping[str, str],
) -> Launch:
    private = tempfile.mkdtemp(prefix="acp2-command-")
    home = source.get("HOME", "")
    readable = [*SYSTEM_DIRS, *readable_extras(policy, home), "/proc", "/sys", "/dev"]
    try:
        ruleset = landlock.build_ruleset(
            readable, [*roots, private, *DEVICES], network=policy.network
        )
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise
    steps: list[Callable[[], None]] = []
    if os.geteuid() == 0:
        steps.append(landlock.drop_capabilities)
    steps.append(functools.partial(landlock.restrict_self, ruleset))
    env = _env(source, policy, cwd, {"TMPDIR": private, "HOME": private})

    def cleanup() -> None:
        with contextlib.suppress(OSError):
            os.close(ruleset)
        shutil.rmtree(private, ignore_errors=True)

    return Launch(shell, env, tuple(steps), cleanup)
