"""Globs: the automaton agrees with the regular expression, and never backtracks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp2.coder.tools.globs import _tokens, compile_glob, translate

pieces = st.sampled_from(["a", "b", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "\\*"])
globs = st.lists(pieces, max_size=8).map("".join)
paths = st.lists(st.sampled_from(["a", "b", "/", "*"]), max_size=12).map("".join)


@given(glob=globs, path=paths)
def test_the_automaton_matches_exactly_what_the_regex_matches(glob: str, path: str) -> None:
    regex = re.compile(translate(tuple(_tokens(glob.strip("/")))) + r"\Z")
    automaton = compile_glob(glob)
    if automaton.regex is None:
        assert automaton.match(path) == (regex.match(path) is not None)


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("a/**/b/*.txt", "a/x/y/b/z.txt", True),
        ("a/**/b/*.txt", "a/b/z.txt", True),
        ("a/**/b/*.txt", "a/b/c/z.txt", False),
        ("*a*b", "xaYb", True),
        ("*a*b", "xa/b", False),
        ("**a**b", "x/a/y/b", True),
    ],
)
def test_globs_with_several_wildcards_match_like_git(glob: str, path: str, matches: bool) -> None:
    assert compile_glob(glob).regex is None
    assert compile_glob(glob).match(path) is matches


def test_a_backtracking_glob_on_a_long_name_is_linear() -> None:
    glob = compile_glob("*a*a*a*a*a*a*a*a*a*a*b")
    assert not glob.match("a" * 5000)  # as a regex: about 5000**10 steps
