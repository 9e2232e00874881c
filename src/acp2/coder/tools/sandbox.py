"""Confinement of every tool path to the session's root set (``cwd`` + additional dirs).

A path is accepted only if, after making it absolute (relative paths start at ``cwd``),
normalising ``..`` and resolving every symlink with :func:`os.path.realpath`, it lies
inside one of the roots (themselves resolved). So ``../x``, ``/etc/passwd``, a symlink
pointing out, and a write through a symlinked parent directory are all refused with a
:class:`SandboxError` whose message the model can read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from acp2.coder.tools.errors import ToolError

__all__ = ["Sandbox", "SandboxError", "SandboxPath"]


class SandboxError(ToolError):
    """A path outside the session's root set (or otherwise unusable)."""


@dataclass(frozen=True)
class SandboxPath:
    """A confined path: ``real`` (symlinks resolved, what IO uses), ``shown`` (absolute,
    as the user named it, for titles and locations) and ``relative`` (to ``cwd`` when
    inside it, else absolute) for text the model reads."""

    real: str
    shown: str
    relative: str


class Sandbox:
    """The root set of one session; resolves and checks every path a tool touches."""

    def __init__(self, cwd: str, additional: Sequence[str] = ()) -> None:
        if not os.path.isabs(cwd):
            raise ValueError(f"the session cwd must be absolute: {cwd!r}")
        self.cwd = os.path.normpath(cwd)
        self.roots = tuple(os.path.realpath(r) for r in (self.cwd, *additional))

    def resolve(self, path: str) -> SandboxPath:
        """Confine ``path``; raise SandboxError when it is empty or leaves the roots."""
        if not isinstance(path, str) or not path.strip():
            raise SandboxError("a path is required")
        if "\x00" in path:
            raise SandboxError("the path contains a NUL byte")
        shown = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        real = os.path.realpath(shown)
        if not self.contains(real):
            raise SandboxError(
                f"{path!r} is outside the workspace; tools may only use paths under "
                + ", ".join(self.roots)
            )
        return SandboxPath(real=real, shown=shown, relative=self.display(shown))

    def resolve_for_write(self, path: str) -> SandboxPath:
        """Like :meth:`resolve`, and also refuse a target that is a directory.

        A symlinked parent leading out is already refused by :meth:`resolve`, which
        resolves every component, including the parents of a file not created yet.
        """
        target = self.resolve(path)
        if os.path.isdir(target.real):
            raise SandboxError(f"{target.relative} is a directory")
        return target

    def contains(self, real: str) -> bool:
        """True when the resolved path ``real`` is one of the roots or below one."""
        return any(_within(real, root) for root in self.roots)

    def display(self, path: str) -> str:
        """``path`` relative to ``cwd`` when inside it (``.`` for cwd itself), else absolute."""
        if _within(path, self.cwd):
            return os.path.relpath(path, self.cwd)
        return path


def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a mix of absolute and relative
        return False
