"""Confinement of every tool path to the session's root set (``cwd`` + additional dirs).

A path is accepted only if, after making it absolute (relative paths start at ``cwd``),
normalising ``..`` and resolving every symlink with :func:`os.path.realpath`, it lies
inside one of the roots (themselves resolved). So ``../x``, ``/etc/passwd``, a symlink
pointing out, and a write through a symlinked parent directory are all refused with a
:class:`SandboxError` whose message the model can read.

That check alone can be raced (a directory swapped for a symlink between the check and
the ``open``), so IO never uses the path: :meth:`Sandbox.open_file` and
:meth:`Sandbox.open_dir` open the resolved path relative to its root's descriptor without
following any symlink (:mod:`acp2.beneath`) and check the descriptor.

Writes are also refused below *protected paths* (:data:`DEFAULT_PROTECTED`): version
control metadata and editor or shell configuration that runs commands when another
program (``git status``, ``direnv``, an editor) next looks at the workspace.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from acp2.beneath import BeneathError, open_beneath
from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.hookpaths import HOOK_MANAGER_PATHS, hooks_dir
from acp2.errors import MissingPathError, SandboxError

__all__ = ["DEFAULT_PROTECTED", "MissingPathError", "Sandbox", "SandboxError", "SandboxPath"]

#: Paths no tool may write, at any depth of a root (matched per path component,
#: case-insensitively): ``.git`` (``core.fsmonitor``, hooks), ``.hg``, ``.svn``,
#: ``.bzr``, ``.jj`` (hooks and config that run commands), ``.envrc`` (direnv runs it),
#: ``.vscode`` and ``.idea`` (tasks and run configurations an editor may start), and the
#: hook managers' files (:data:`~acp2.coder.tools.hookpaths.HOOK_MANAGER_PATHS`: husky,
#: lefthook, pre-commit). A repository's ``core.hooksPath`` is refused as well, always.
DEFAULT_PROTECTED: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".jj",
    ".envrc",
    ".vscode",
    ".idea",
    *HOOK_MANAGER_PATHS,
)

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


@dataclass(frozen=True)
class SandboxPath:
    """A confined path: ``real`` (symlinks resolved, what IO uses), ``shown`` (absolute,
    as the user named it, for titles and locations) and ``relative`` (to ``cwd`` when
    inside it, else absolute) for text the model reads."""

    real: str
    shown: str
    relative: str


class Sandbox:
    """The root set of one session; resolves and checks every path a tool touches.

    ``protected`` lists the paths writes are refused under (see :data:`DEFAULT_PROTECTED`;
    each entry is one or more ``/``-separated components matched anywhere in a path).
    """

    def __init__(
        self,
        cwd: str,
        additional: Sequence[str] = (),
        *,
        protected: Sequence[str] = DEFAULT_PROTECTED,
    ) -> None:
        if not os.path.isabs(cwd):
            raise ValueError(f"the session cwd must be absolute: {cwd!r}")
        self.cwd = os.path.normpath(cwd)
        self.additional = tuple(additional)
        self.roots = tuple(os.path.realpath(r) for r in (self.cwd, *self.additional))
        self.protected = tuple(tuple(_fold(p).strip("/").split("/")) for p in protected)

    def resolve(self, path: str) -> SandboxPath:
        """Confine ``path``; raise SandboxError when it is empty or leaves the roots."""
        if not isinstance(path, str) or not path.strip():
            raise SandboxError("a path is required")
        if "\x00" in path:
            raise SandboxError("the path contains a NUL byte")
        shown = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        try:
            real = os.path.realpath(shown)
        except (OSError, ValueError) as exc:
            raise SandboxError(f"{path!r} cannot be resolved: {_reason(exc)}") from None
        if not self.contains(real):
            raise SandboxError(
                f"{path!r} is outside the workspace; tools may only use paths under "
                + ", ".join(self.roots)
            )
        return SandboxPath(real=real, shown=shown, relative=self.display(shown))

    def resolve_for_write(self, path: str) -> SandboxPath:
        """Like :meth:`resolve`, and also refuse a directory or a protected path.

        A symlinked parent leading out is already refused by :meth:`resolve`, which
        resolves every component, including the parents of a file not created yet.
        """
        target = self.resolve(path)
        hit = self.protected_part(target.shown) or self.protected_part(target.real)
        hit = hit or self._hooks_part(target)
        if hit:
            raise SandboxError(
                f"{target.relative} is under the protected path {hit!r}; writing there could "
                "run commands (e.g. git hooks or core.fsmonitor), so tools may not change it. "
                "Ask the user to make this change themselves."
            )
        if os.path.isdir(target.real):
            raise SandboxError(f"{target.relative} is a directory")
        return target

    def protected_part(self, path: str) -> str | None:
        """The protected entry ``path`` (absolute) lies under, or None."""
        located = self.locate(path)
        if located is None:
            return None
        parts = _fold(located[1]).split(os.sep)
        for entry in self.protected:
            for start in range(len(parts) - len(entry) + 1):
                if tuple(parts[start : start + len(entry)]) == entry:
                    return "/".join(entry)
        return None

    def _hooks_part(self, target: SandboxPath) -> str | None:
        """``core.hooksPath (dir)`` when ``target`` lies in its repository's hooks path.

        Read at each write, not once: the path belongs to whichever repository (nested
        ones included) holds the file, and the user may change it mid-session.
        """
        hooks = hooks_dir(target.real)
        if hooks is None or not _within(target.real, hooks):
            return None
        return f"core.hooksPath ({self.display(hooks)})"

    def contains(self, real: str) -> bool:
        """True when the resolved path ``real`` is one of the roots or below one."""
        return any(_within(real, root) for root in self.roots)

    def locate(self, path: str) -> tuple[str, str] | None:
        """``(root, path relative to it)`` for the innermost root holding ``path``."""
        holders = [root for root in self.roots if _within(path, root)]
        if not holders:
            return None
        root = max(holders, key=len)
        return root, os.path.relpath(path, root)

    def display(self, path: str) -> str:
        """``path`` relative to ``cwd`` when inside it (``.`` for cwd itself), else absolute."""
        if _within(path, self.cwd):
            return os.path.relpath(path, self.cwd)
        return path

    # -- descriptor-based IO --------------------------------------------------------

    def open_file(self, target: SandboxPath) -> int:
        """Open the regular file ``target`` for reading, race-free; return the descriptor.

        The open never blocks (``O_NONBLOCK``: a FIFO does not wait for a writer) and
        the descriptor must be a regular file, else SandboxError/ToolError.
        """
        fd = self._open(target.real, target.relative, os.O_RDONLY | _NONBLOCK)
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            os.close(fd)
            raise ToolError(f"cannot read {target.relative}: {_reason(exc)}") from None
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise ToolError(f"{target.relative} is a directory; use list_files")
            raise ToolError(f"{target.relative} is not a regular file ({_kind(mode)})")
        return fd

    def open_dir(self, real: str, shown: str, *, create: bool = False) -> int:
        """Open the directory ``real`` race-free (creating missing parts when ``create``)."""
        flags = os.O_RDONLY | _DIRECTORY
        try:
            return self._open(real, shown, flags)
        except MissingPathError:
            if not create:
                raise
        parent, name = os.path.split(real)
        if not self.contains(parent):
            raise SandboxError(f"{shown} cannot be created outside the workspace")
        fd = self.open_dir(parent, shown, create=True)
        try:
            os.mkdir(name, 0o755, dir_fd=fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ToolError(f"cannot create {shown}: {_reason(exc)}") from None
        finally:
            os.close(fd)
        return self._open(real, shown, flags)

    def _open(self, real: str, shown: str, flags: int) -> int:
        located = self.locate(real)
        if located is None:
            raise SandboxError(f"{shown!r} is outside the workspace")
        try:
            return open_beneath(located[0], located[1], flags)
        except BeneathError:
            raise SandboxError(
                f"{shown} changed while it was being opened (a symlink appeared on the "
                "way); nothing was read or written"
            ) from None
        except FileNotFoundError:
            raise MissingPathError(f"{shown} does not exist") from None
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # a socket (or a device without its driver)
                raise ToolError(f"{shown} is not a regular file (a socket or device)") from None
            raise ToolError(f"cannot open {shown}: {_reason(exc)}") from None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _fold(text: str) -> str:
    return text.casefold()


def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a mix of absolute and relative
        return False
