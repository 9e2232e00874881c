"""Where git hooks live besides ``.git/hooks``: ``core.hooksPath`` and hook managers.

A repository may move its hooks out of ``.git`` with ``core.hooksPath`` (husky sets it
to ``.husky``; many projects use ``.githooks``), or have a hook manager run commands
named in a tracked file (lefthook's ``lefthook.yml``, pre-commit's
``.pre-commit-config.yaml``). A file the model writes there runs, outside any sandbox,
at the user's next ``git commit``; so :class:`~acp2.coder.tools.sandbox.Sandbox` refuses
writes there exactly as it refuses ``.git``.

:func:`hooks_dir` reads ``core.hooksPath`` from the configuration files itself (system,
global, the repository's, its worktree's; the last one wins, as with git) and never runs
git: running git in a workspace is what a hostile configuration is waiting for.
``include`` and ``includeIf`` directives are not followed.
"""

from __future__ import annotations

import os

__all__ = ["HOOK_MANAGER_PATHS", "hooks_dir"]

#: Files and directories of hook managers (husky, lefthook, pre-commit) whose content
#: becomes a command at the next commit; protected by default like ``.git``.
HOOK_MANAGER_PATHS: tuple[str, ...] = (
    ".husky",
    ".huskyrc",  # husky 4 kept its hook commands here (or in package.json)
    ".huskyrc.json",
    ".huskyrc.js",
    "husky.config.js",
    ".lefthook",
    *(
        f"{dot}lefthook{local}.{ext}"
        for dot in ("", ".")
        for local in ("", "-local")
        for ext in ("yml", "yaml", "json", "toml")
    ),
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
)

#: A configuration file larger than this is not read (no real one comes near it).
_MAX_CONFIG = 1 << 20


def hooks_dir(path: str) -> str | None:
    """The resolved ``core.hooksPath`` of the repository holding ``path`` (absolute),
    or None when it is not in a repository or the option is unset.

    A relative value is taken from the repository's top directory, as git runs hooks
    there; ``~/`` is expanded. Unreadable configuration files count as empty.
    """
    found = _repository(os.path.dirname(path))
    if found is None:
        return None
    top, git_dir = found
    value = None
    for config in (*_user_configs(), *_repo_configs(git_dir)):
        value = _hooks_path_in(_read(config)) or value
    if not value:
        return None
    return os.path.realpath(os.path.join(top, os.path.expanduser(value)))


def _repository(start: str) -> tuple[str, str] | None:
    """``(top, git directory)`` of the innermost repository at or above ``start``."""
    here = start
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return here, dot_git
        if os.path.isfile(dot_git):  # a worktree or submodule: "gitdir: <path>"
            target = _read(dot_git).strip()
            if target.startswith("gitdir:"):
                return here, os.path.join(here, target[len("gitdir:") :].strip())
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _repo_configs(git_dir: str) -> list[str]:
    """The repository's config (in the common directory of a worktree), then the
    worktree's own ``config.worktree``."""
    common = _read(os.path.join(git_dir, "commondir")).strip()
    shared = os.path.join(git_dir, common) if common else git_dir
    return [os.path.join(shared, "config"), os.path.join(git_dir, "config.worktree")]


def _user_configs() -> list[str]:
    """The system and the user's global configuration files, in git's order."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = ["/etc/gitconfig", os.path.join(xdg, "git", "config")]
    found.append(os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"))
    return found


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_CONFIG).decode("utf-8", "replace")
    except OSError:
        return ""


def _hooks_path_in(text: str) -> str | None:
    """The last ``hooksPath`` of a ``[core]`` section in git configuration ``text``."""
    section, value = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            head = line[1:].split("]", 1)[0]
            section = head.split(None, 1)[0].split('"', 1)[0].casefold() if head else ""
            line = line.split("]", 1)[1].strip() if "]" in line else ""
        name, sep, rest = line.partition("=")
        if section == "core" and sep and name.strip().casefold() == "hookspath":
            value = _unquote(rest)
    return value


def _unquote(rest: str) -> str:
    """A config value without its comment and surrounding quotes."""
    text = rest.strip()
    if text.startswith('"'):
        return text[1:].split('"', 1)[0]
    for mark in ("#", ";"):
        text = text.split(mark, 1)[0]
    return text.strip()
