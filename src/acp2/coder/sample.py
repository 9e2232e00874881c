"""The sample project the scripted model knows how to fix (the workspace of ``acp2 demo``).

It is shipped as package data under ``sample_project/``; Python sources carry a ``.tmpl``
suffix there so that the project's own linters and type checker leave them alone.
:func:`copy_sample_project` writes the real tree: a tiny ``mathkit`` library whose
``python3 -m unittest`` fails (``running_total`` skips the first value) until it is fixed.
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

__all__ = ["copy_sample_project", "sample_files"]

_SUFFIX = ".tmpl"


def sample_files() -> dict[str, str]:
    """The sample project as ``{relative path: text}`` (``/``-separated, sorted)."""
    root = resources.files("acp2.coder").joinpath("sample_project")
    found: dict[str, str] = {}
    _collect(root, "", found)
    return dict(sorted(found.items()))


def _collect(node: Traversable, prefix: str, found: dict[str, str]) -> None:
    for child in node.iterdir():
        if child.name == "__pycache__":
            continue
        rel = prefix + child.name
        if child.is_dir():
            _collect(child, rel + "/", found)
        else:
            name = rel[: -len(_SUFFIX)] if rel.endswith(_SUFFIX) else rel
            found[name] = child.read_text(encoding="utf-8")


def copy_sample_project(dest: str | os.PathLike[str]) -> Path:
    """Write the sample project into ``dest`` (created; must be empty if it exists).

    Returns the absolute path of ``dest``. Raises FileExistsError if ``dest`` has files.
    """
    target = Path(dest).absolute()
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} is not empty")
    for rel, text in sample_files().items():
        path = target.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target
