"""``@path`` attachments (acp2.ui.mentions): confined to the session folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp2.schema import EmbeddedResource, ResourceLink, TextContent
from acp2.ui.mentions import MAX_EMBED_BYTES, confined, mentions, path_completions, prompt_blocks


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".env").write_text("SECRET=1")
    (root / "image.bin").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "outside.txt").write_text("private")
    return root


def test_mentions_are_at_words_each_once_without_trailing_punctuation() -> None:
    assert mentions("see @a.py, and @b/c.txt; again @a.py — mail x@y.z") == ["a.py", "b/c.txt"]


def test_a_text_file_is_embedded_when_the_agent_takes_embedded_context(folder: Path) -> None:
    attached = prompt_blocks("look at @src/app.py", str(folder), embed=True)
    text, block = attached.blocks
    assert isinstance(text, TextContent)
    assert text.text == "look at @src/app.py"
    assert isinstance(block, EmbeddedResource)
    assert block.resource.text == "print('hi')\n"
    assert block.resource.uri == (folder / "src" / "app.py").as_uri()
    assert attached.notes == [("src/app.py", "attached")]


def test_without_embedded_context_a_file_is_a_resource_link(folder: Path) -> None:
    attached = prompt_blocks("@src/app.py", str(folder), embed=False)
    link = attached.blocks[1]
    assert isinstance(link, ResourceLink)
    assert link.name == "src/app.py"
    assert link.size == 12
    assert link.mime_type == "text/x-python"


def test_binary_and_large_files_are_linked_not_embedded(folder: Path) -> None:
    (folder / "big.txt").write_text("x" * (MAX_EMBED_BYTES + 1))
    attached = prompt_blocks("@image.bin @big.txt", str(folder), embed=True)
    assert [type(b).__name__ for b in attached.blocks] == [
        "TextContent",
        "ResourceLink",
        "ResourceLink",
    ]


def test_paths_outside_the_folder_are_not_attached(folder: Path, tmp_path: Path) -> None:
    (folder / "link").symlink_to(tmp_path / "outside.txt")
    attached = prompt_blocks("@../outside.txt @link @/etc/passwd @missing", str(folder), embed=True)
    assert len(attached.blocks) == 1
    assert [how for _, how in attached.notes] == [
        "outside the session folder: not attached",
        "outside the session folder: not attached",
        "outside the session folder: not attached",
        "no such file: not attached",
    ]
    assert confined(str(folder), "src/../src/app.py") == (folder / "src" / "app.py").resolve()


def test_completion_lists_folder_entries_hiding_dot_files_unless_asked(folder: Path) -> None:
    assert path_completions("", str(folder)) == [("image.bin", False), ("src", True)]
    assert path_completions(".", str(folder)) == [(".env", False)]
    assert path_completions("src/a", str(folder)) == [("src/app.py", False)]
    assert path_completions("../", str(folder)) == []
