"""The coding agent's stored API key (acp2.coder.credentials): a private file, written
by rename, never read through a link or when others can access it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from acp2.coder.credentials import key_file, store_key, stored_key


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ACP2_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    return tmp_path / "config"


def test_a_stored_key_is_read_back_from_a_private_file(config_dir: Path) -> None:
    assert stored_key() is None
    assert store_key("  sk-abc  \n") == str(config_dir / "openai-api-key")
    assert stored_key() == "sk-abc"
    assert stat.S_IMODE(key_file().stat().st_mode) == 0o600
    assert stat.S_IMODE(config_dir.stat().st_mode) == 0o700


@pytest.mark.parametrize("key", ["", "   ", "two\nlines", "nul\0byte", "x" * 20000])
def test_a_key_that_is_not_one_short_line_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="one non-empty line"):
        store_key(key)
    assert not key_file().exists()


def test_a_key_file_that_is_a_link_is_not_read(config_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("sk-planted\n")
    (tmp_path / "elsewhere").chmod(0o600)
    config_dir.mkdir(mode=0o700)
    key_file().symlink_to(tmp_path / "elsewhere")
    assert stored_key() is None


def test_a_key_file_others_can_access_is_ignored() -> None:
    store_key("sk-abc")
    key_file().chmod(0o640)
    assert stored_key() is None


def test_storing_again_replaces_the_key_and_never_writes_through_a_link(
    config_dir: Path, tmp_path: Path
) -> None:
    store_key("sk-old")
    target = tmp_path / "victim"
    target.write_text("untouched")
    key_file().unlink()
    key_file().symlink_to(target)
    store_key("sk-new")  # a new file renamed over the link, not a write through it
    assert target.read_text() == "untouched"
    assert not key_file().is_symlink()
    assert stored_key() == "sk-new"
