"""Size and time limits of the file and search tools (issue 10, §3).

Every limit ends a call with a clear tool error (or a marked truncation) instead of
letting a workspace file or a model-chosen pattern take the agent's memory or time.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "FileLimits"]


@dataclass(frozen=True)
class FileLimits:
    """Limits of one session's tools.

    ``read_chars``: characters one ``read_file`` returns (the file is streamed, so its
    size does not matter). ``edit_bytes``: the largest file ``write_file`` / ``edit_file``
    read, write and diff. ``diff_lines``: lines of a changed region compared line by line;
    a larger region is shown as one replaced block. ``search_file_bytes``: larger files
    are skipped by ``search``. ``search_seconds``: a search running longer is stopped.
    ``list_max`` / ``search_matches``: entries one call returns.
    """

    read_chars: int = 100_000
    edit_bytes: int = 8 * 1024 * 1024
    diff_lines: int = 20_000
    search_file_bytes: int = 1_000_000
    search_seconds: float = 30.0
    list_max: int = 500
    search_matches: int = 200


#: The limits used when none are given.
DEFAULT_LIMITS = FileLimits()
