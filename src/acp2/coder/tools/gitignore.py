"""A small ``.gitignore`` matcher and a directory walker that honours it.

Supported: comments, blank lines, ``!`` negation, trailing ``/`` (directories only),
anchoring (a leading or middle ``/``), ``*``, ``?``, ``[...]``, ``**`` (leading, middle,
trailing) and backslash escapes. ``.gitignore`` files are read in every directory the
walk enters; the last matching rule wins; an ignored directory is not entered (so, as in
Git, nothing below it can be re-included). ``.git`` itself is always skipped.

The patterns are the workspace's, so they are matched without backtracking
(:mod:`acp2.coder.tools.globs`), and the walk goes by directory descriptors, never
through a symlink.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from acp2.coder.tools.globs import Glob, compile_glob

__all__ = ["IgnoreRule", "IgnoreRules", "compile_glob", "parse_gitignore", "walk"]


@dataclass(frozen=True)
class IgnoreRule:
    """One compiled line: its glob, negation, directory-only flag and anchoring."""

    glob: Glob
    negated: bool
    dir_only: bool
    anchored: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    """Compile the lines of one ``.gitignore`` file, in order."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(IgnoreRule(compile_glob(line), negated, dir_only, anchored))
    return rules


class IgnoreRules:
    """The rules in force at one point of a walk: ``(base, rules)`` layers, outermost first,
    where ``base`` is the directory (relative to the walk's top) of each ``.gitignore``."""

    def __init__(self, layers: tuple[tuple[str, tuple[IgnoreRule, ...]], ...] = ()) -> None:
        self.layers = layers

    def extend(self, base: str, rules: list[IgnoreRule]) -> IgnoreRules:
        """Return the rules with one more ``.gitignore`` layer (self unchanged)."""
        return IgnoreRules((*self.layers, (base, tuple(rules)))) if rules else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """True when the path ``rel`` (relative to the walk's top, ``/``-separated) is ignored."""
        verdict = False
        for base, rules in self.layers:
            sub = rel[len(base) + 1 :] if base else rel
            name = sub.rsplit("/", 1)[-1]
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.glob.match(sub if rule.anchored else name):
                    verdict = not rule.negated
        return verdict


def walk(top: str, *, dir_fd: int | None = None) -> Iterator[tuple[str, str]]:
    """Yield ``(absolute path, relative path)`` of every file under ``top`` that no
    ``.gitignore`` excludes, sorted per directory. Symlinked directories are not entered.

    The walk goes by directory descriptors (``dir_fd`` when given, the descriptor of the
    opened ``top`` otherwise), each child opened with ``O_NOFOLLOW`` from its parent's, so
    a directory swapped for a symlink during the walk is skipped, never followed.
    """
    fd = os.open(top, _DIR_FLAGS & ~_NOFOLLOW) if dir_fd is None else os.dup(dir_fd)
    try:
        yield from _walk(fd, top, "", IgnoreRules())
    finally:
        os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
#: Larger ``.gitignore`` files are not read.
MAX_GITIGNORE_BYTES = 1_000_000


def _walk(fd: int, path: str, rel: str, rules: IgnoreRules) -> Iterator[tuple[str, str]]:
    rules = rules.extend(rel, _read_rules(fd))
    try:
        entries = sorted(os.scandir(fd), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        child = f"{rel}/{entry.name}" if rel else entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if entry.name == ".git" or rules.ignored(child, is_dir):
            continue
        if is_dir:
            yield from _walk_child(fd, entry.name, os.path.join(path, entry.name), child, rules)
        else:
            yield os.path.join(path, entry.name), child


def _walk_child(
    fd: int, name: str, path: str, rel: str, rules: IgnoreRules
) -> Iterator[tuple[str, str]]:
    try:
        child_fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError:  # gone, or swapped for a symlink since it was listed
        return
    try:
        yield from _walk(child_fd, path, rel, rules)
    finally:
        os.close(child_fd)


def _read_rules(dir_fd: int) -> list[IgnoreRule]:
    try:
        fd = os.open(".gitignore", _FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = handle.read(MAX_GITIGNORE_BYTES)
    return parse_gitignore(data.decode("utf-8", errors="replace"))
