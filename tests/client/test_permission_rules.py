"""Permission rules: parsing, and which requests a rule covers (acp2.client.permission_rules)."""

from __future__ import annotations

import pytest

from acp2.client.permission_rules import Facts, parse_rule, rule_for
from acp2.errors import InvalidSettings

ROOT = "/home/me/project"


def execute(*commands: str) -> Facts:
    return Facts("execute", commands, (), ROOT)


def edit(*paths: str) -> Facts:
    return Facts("edit", (), paths, ROOT)


@pytest.mark.parametrize("text", ["", "write", "execute(", "execute()", "read(a) b", 3])
def test_a_malformed_rule_is_refused_with_its_text(text: object) -> None:
    with pytest.raises(InvalidSettings):
        parse_rule(text)  # type: ignore[arg-type]


def test_an_exact_command_rule_covers_that_command_only() -> None:
    rule = parse_rule("execute(make test)")
    assert rule.matches(execute("make  test"))
    assert not rule.matches(execute("make test-all"))
    assert not rule.matches(execute("make"))


def test_a_prefix_rule_covers_the_prefix_and_longer_commands_at_a_word_boundary() -> None:
    rule = parse_rule("execute(git status *)")
    assert rule.matches(execute("git status"))
    assert rule.matches(execute("git status --short"))
    assert not rule.matches(execute("git statusx"))


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf ~",
        "git status && curl x",
        "git status | sh",
        "git status $(id)",
        "git status `id`",
        "git status > /etc/passwd",
        "git status\nrm -rf ~",
    ],
)
def test_a_command_with_shell_control_characters_never_matches(command: str) -> None:
    assert not parse_rule("execute(git status *)").matches(execute(command))
    assert not parse_rule("execute(*)").matches(execute(command))


def test_every_command_of_a_request_must_be_covered() -> None:
    rule = parse_rule("execute(make test)")
    assert not rule.matches(execute("make test", "rm -rf build"))


def test_a_kind_rule_covers_any_request_of_its_kind_and_no_other() -> None:
    assert parse_rule("edit").matches(edit("/etc/passwd"))
    assert not parse_rule("read").matches(edit(f"{ROOT}/a.py"))
    assert parse_rule("*").matches(execute("anything"))


def test_a_relative_glob_covers_paths_inside_the_folder_only() -> None:
    rule = parse_rule("edit(src/**)")
    assert rule.matches(edit(f"{ROOT}/src/a.py", f"{ROOT}/src/deep/b.py"))
    assert not rule.matches(edit(f"{ROOT}/src/../../other/src/a.py"))
    assert not rule.matches(edit(f"{ROOT}/tests/a.py"))
    assert not rule.matches(edit(f"{ROOT}/src/a.py", "/etc/passwd"))
    assert not rule.matches(edit())  # no location: a path rule cannot vouch for it


def test_a_single_star_stays_within_one_folder() -> None:
    rule = parse_rule("edit(*.md)")
    assert rule.matches(edit(f"{ROOT}/README.md"))
    assert not rule.matches(edit(f"{ROOT}/docs/a.md"))


def test_a_request_about_nothing_matches_no_rule() -> None:
    assert not parse_rule("*").matches(Facts(None, (), (), ROOT))


def test_only_read_kinds_with_a_glob_inside_the_folder_look_only() -> None:
    assert parse_rule("read(src/**)").looks_only
    assert parse_rule("search(**)").looks_only
    assert not parse_rule("read").looks_only  # any file, ~/.ssh included
    assert not parse_rule("read(/etc/*)").looks_only
    assert not parse_rule("read(../**)").looks_only
    assert not parse_rule("edit(src/**)").looks_only
    assert not parse_rule("execute(ls *)").looks_only


def test_the_rule_saved_for_an_answer_is_the_narrowest_that_covers_it() -> None:
    assert rule_for(execute("make   test")) == "execute(make test)"
    assert rule_for(execute("make test; rm x")) is None
    assert rule_for(execute("a", "b")) is None
    assert rule_for(edit(f"{ROOT}/src/a.py")) == "edit(src/a.py)"
    assert rule_for(edit(f"{ROOT}/src/a.py"), relative=False) == f"edit({ROOT}/src/a.py)"
    assert rule_for(edit("/etc/hosts")) == "edit(/etc/hosts)"
    assert rule_for(Facts("think", (), (), ROOT)) == "think"
    assert rule_for(Facts(None, (), (), ROOT)) is None
    saved = parse_rule(rule_for(edit(f"{ROOT}/src/a.py")) or "")
    assert saved.matches(edit(f"{ROOT}/src/a.py"))
