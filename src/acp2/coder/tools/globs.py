"""Glob matching that cannot backtrack: ``*``, ``?``, ``[...]``, ``**`` over ``/`` paths.

Globs come from the model (``list_files``, ``search``) and from the workspace's
``.gitignore`` files, so they are hostile input. Translated to a backtracking regular
expression, ``*a*a*a*a*a*a*b`` against a long name takes time growing with the name's
length to the power of the number of stars, holding the interpreter lock (issue 10, §3).
So a glob with more than one wildcard is matched by simulating its automaton (a set of
positions in the pattern, advanced one character at a time: time linear in the path's
length times the pattern's); a glob with at most one wildcard, which cannot blow up, uses
the regular expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Glob", "compile_glob", "translate"]

_STAR, _DSTAR, _DSTAR_SLASH = "*", "**", "**/"
_Token = tuple[str, str | re.Pattern[str]]


@dataclass(frozen=True)
class Glob:
    """A compiled glob; :meth:`match` is true when it matches the whole path."""

    tokens: tuple[_Token, ...]
    regex: re.Pattern[str] | None

    def match(self, path: str) -> bool:
        """True when the glob matches all of ``path``."""
        if self.regex is not None:
            return self.regex.match(path) is not None
        return _simulate(self.tokens, path)


def compile_glob(pattern: str) -> Glob:
    """Compile a ``/``-separated glob matching whole paths (see the module docstring)."""
    tokens = tuple(_tokens(pattern.strip("/")))
    wild = sum(kind in (_STAR, _DSTAR, _DSTAR_SLASH) for kind, _ in tokens)
    regex = re.compile(translate(tokens) + r"\Z") if wild <= 1 else None
    return Glob(tokens, regex)


def _tokens(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        token: _Token
        if pattern.startswith("**/", i):
            token, i = (_DSTAR_SLASH, ""), i + 3
        elif pattern.startswith("**", i):
            token, i = (_DSTAR, ""), i + 2
        elif c == "*":
            token, i = (_STAR, ""), i + 1
        elif c == "?":
            token, i = ("?", ""), i + 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            token, i = ("[", re.compile("[" + body.replace("\\", "\\\\") + "]")), end + 1
        elif c == "\\" and i + 1 < n:
            token, i = ("=", pattern[i + 1]), i + 2
        else:
            token, i = ("=", c), i + 1
        if not (out and token[0] in (_STAR, _DSTAR, _DSTAR_SLASH) and out[-1] == token):
            out.append(token)  # a run of the same wildcard is one wildcard
    return out


def translate(tokens: tuple[_Token, ...]) -> str:
    """The regular expression (without the final anchor) of a token sequence."""
    parts = {_STAR: "[^/]*", _DSTAR: ".*", _DSTAR_SLASH: "(?:.*/)?", "?": "[^/]"}
    out = []
    for kind, value in tokens:
        if kind in parts:
            out.append(parts[kind])
        elif kind == "[":
            assert isinstance(value, re.Pattern)
            out.append(value.pattern)
        else:
            assert isinstance(value, str)
            out.append(re.escape(value))
    return "".join(out)


def _simulate(tokens: tuple[_Token, ...], path: str) -> bool:
    # States: i = "before token i"; -(i + 1) = "inside the .*/ of a **/ token i".
    states = _closure(tokens, {0})
    for char in path:
        moved: set[int] = set()
        for state in states:
            moved.update(_step(tokens, state, char))
        if not moved:
            return False
        states = _closure(tokens, moved)
    return len(tokens) in states


def _closure(tokens: tuple[_Token, ...], states: set[int]) -> set[int]:
    todo, seen = list(states), set(states)
    while todo:
        state = todo.pop()
        wild = 0 <= state < len(tokens) and tokens[state][0] in (_STAR, _DSTAR, _DSTAR_SLASH)
        if wild and state + 1 not in seen:
            seen.add(state + 1)
            todo.append(state + 1)
    return seen


def _step(tokens: tuple[_Token, ...], state: int, char: str) -> list[int]:
    if state < 0:  # inside **/: anything, and a / may end it
        index = -state - 1
        return [state, index + 1] if char == "/" else [state]
    if state == len(tokens):
        return []
    kind, value = tokens[state]
    if kind == _STAR:
        return [state] if char != "/" else []
    if kind == _DSTAR:
        return [state]
    if kind == _DSTAR_SLASH:
        return [-state - 1, state + 1] if char == "/" else [-state - 1]
    if kind == "?":
        return [state + 1] if char != "/" else []
    if kind == "[":
        assert isinstance(value, re.Pattern)
        return [state + 1] if value.fullmatch(char) else []
    return [state + 1] if char == value else []
