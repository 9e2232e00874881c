"""Where the chat history lives (acp2.ui.history): one file per project folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp2.ui.history import data_dir, history_path, open_history


@pytest.fixture(autouse=True)
def data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ACP2_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_each_folder_has_its_own_history_file(data: Path) -> None:
    first = history_path("/work/app")
    assert first.parent == data / "history"
    assert first.name.startswith("app-")
    assert history_path("/work/app/") == first
    assert history_path("/work/app/../app") == first
    assert history_path("/other/app") != first  # same name, other folder


def test_odd_folder_names_make_safe_file_names() -> None:
    name = history_path("/tmp/we ird/..;$(rm)\n").name
    assert "/" not in name
    assert "\n" not in name
    assert "$" not in name
    assert history_path("/").name.startswith("root-")


def test_the_data_directory_follows_xdg_without_acp2_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ACP2_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "acp2"


def test_history_is_written_to_the_folders_file(data: Path) -> None:
    history = open_history("/work/app")
    history.store_string("two\nlines")
    assert "+two\n+lines" in history_path("/work/app").read_text()


def test_an_unwritable_data_directory_falls_back_to_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ACP2_DATA_DIR", str(blocker))
    assert type(open_history("/x")).__name__ == "InMemoryHistory"
