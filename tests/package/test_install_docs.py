"""The README tells a new user how to install acp2 from the checkout and get ``acp2`` on
PATH, and no document gives an install command that cannot work (acp2 is unpublished)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_has_an_install_section_with_path_and_tool_installs() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    for expected in (
        "python3 -m venv .venv",
        ".venv/bin/pip install -e '.[all]'",
        "source .venv/bin/activate",
        'export PATH="$PWD/.venv/bin:$PATH"',
        "pipx install '/path/to/checkout[all]'",
        "uv tool install '/path/to/checkout[all]'",
    ):
        assert expected in section


def test_the_readme_says_where_the_interop_peers_come_from() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "the official TypeScript SDK with npm and the official Python SDK" in readme
    assert "each from a lockfile — into a cache" in readme


def test_no_document_installs_acp2_from_a_package_index() -> None:
    unpublished = re.compile(r"pip install ['\"]?acp2\b")
    for doc in DOCS:
        assert not unpublished.search(doc.read_text()), doc.name
