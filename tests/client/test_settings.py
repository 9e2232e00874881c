"""Saved permission rules in the user's and the project's settings files
(acp2.client.settings): what a project file may grant, confirmation, editing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp2.client.permission_rules import Facts
from acp2.client.settings import (
    add_rule,
    decide,
    load_rules,
    project_settings_path,
    remove_rule,
    trust_project,
    user_settings_path,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ACP2_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def write(path: Path, allow: list[str], deny: list[str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"allow": allow, "deny": deny or []}}))


def edit(project: Path, name: str) -> Facts:
    return Facts("edit", (), (str(project / name),), str(project))


def read(project: Path, name: str) -> Facts:
    return Facts("read", (), (str(project / name),), str(project))


def test_the_user_file_lives_in_the_config_directory(project: Path) -> None:
    assert user_settings_path() == project.parent / "config" / "settings.json"
    assert project_settings_path(str(project)) == project / ".acp2" / "settings.json"


def test_a_cloned_project_file_grants_only_looking_inside_the_project(project: Path) -> None:
    write(project_settings_path(str(project)), ["read(**)", "edit", "execute(*)", "read"])
    entries, warnings = load_rules(str(project))
    assert warnings == []
    assert {e.rule.text: e.active for e in entries} == {
        "read(**)": True,
        "edit": False,
        "execute(*)": False,
        "read": False,
    }
    assert decide(entries, read(project, "a.py")) is not None
    assert decide(entries, edit(project, "a.py")) is None
    assert decide(entries, Facts("read", (), ("/home/me/.ssh/id_rsa",), str(project))) is None


def test_a_project_file_confirmed_by_the_user_grants_all_its_rules_until_it_changes(
    project: Path,
) -> None:
    path = project_settings_path(str(project))
    write(path, ["edit"])
    assert trust_project(str(project)) == path
    entries, _ = load_rules(str(project))
    assert decide(entries, edit(project, "a.py")) is not None
    write(path, ["edit", "execute(*)"])  # e.g. a git pull changed it
    entries, _ = load_rules(str(project))
    assert decide(entries, edit(project, "a.py")) is None


def test_deny_rules_of_any_file_apply_and_win_over_allow_rules(project: Path) -> None:
    write(user_settings_path(), ["edit"])
    write(project_settings_path(str(project)), [], ["edit(secrets/**)"])
    entries, _ = load_rules(str(project))
    assert decide(entries, edit(project, "secrets/key")).effect == "deny"  # type: ignore[union-attr]
    assert decide(entries, edit(project, "a.py")).effect == "allow"  # type: ignore[union-attr]
    assert decide(entries, edit(project, "a.py"), allow=False) is None


def test_a_rule_saved_in_the_project_file_is_confirmed_with_it(project: Path) -> None:
    path = add_rule("edit(src/a.py)", "allow", "project", str(project))
    assert json.loads(path.read_text())["permissions"]["allow"] == ["edit(src/a.py)"]
    add_rule("edit(src/a.py)", "allow", "project", str(project))  # not twice
    entries, _ = load_rules(str(project))
    assert [(e.rule.text, e.active) for e in entries] == [("edit(src/a.py)", True)]


def test_removing_a_rule_keeps_the_rest_of_the_file(project: Path) -> None:
    path = user_settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"theme": "dark", "permissions": {"allow": ["edit", "read"]}}))
    entries, _ = load_rules(str(project))
    remove_rule(entries[0], str(project))
    assert json.loads(path.read_text()) == {"theme": "dark", "permissions": {"allow": ["read"]}}


@pytest.mark.parametrize(
    ("content", "said"),
    [("{not json", "not JSON"), ("[1]", "not a JSON object"), (" " * (1 << 20 + 1), "larger")],
)
def test_an_unreadable_file_is_skipped_with_a_warning(
    project: Path, content: str, said: str
) -> None:
    path = project_settings_path(str(project))
    path.parent.mkdir()
    path.write_text(content)
    write(user_settings_path(), ["read(x)", "bogus rule"])
    entries, warnings = load_rules(str(project))
    assert [e.rule.text for e in entries] == ["read(x)"]
    assert any("bogus rule" in w for w in warnings)
    assert any(said in w and str(path) in w for w in warnings)


def test_a_cloned_project_file_cannot_approve_reading_through_a_symlink_out_of_it(
    project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("key")
    (project / "docs").mkdir()
    (project / "docs" / "key").symlink_to(secret)
    write(project_settings_path(str(project)), ["read(docs/**)"])
    entries, _ = load_rules(str(project))
    assert decide(entries, read(project, "docs/key")) is None
    (project / "docs" / "notes").write_text("fine")
    assert decide(entries, read(project, "docs/notes")) is not None
    trust_project(str(project))  # the user's own word covers it
    entries, _ = load_rules(str(project))
    assert decide(entries, read(project, "docs/key")) is not None


def test_the_rules_keep_a_policy_that_asks_nobody_marked_so() -> None:
    from acp2.client import allow_all, deny_all
    from acp2.client.permissions import is_unattended
    from acp2.client.settings import remembering

    assert is_unattended(remembering(deny_all, allow=False))
    assert not is_unattended(remembering(allow_all))
