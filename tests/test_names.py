"""One meaning per word in the module names of src/acp2 (issue 25, item 6).

Three modules were once called "link" (the runtime seam, the client's plumbing, a remote
connection), two "routes", and "attach" meant both a second client joining a session
and a file mentioned in a prompt. Each of these words now names one thing; this test
fails when a module takes one of them for something else.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "acp2"

#: word -> the only modules whose file name may contain it, and what the word means.
ONE_MEANING: dict[str, tuple[frozenset[str], str]] = {
    "link": (frozenset({"rpc/link.py"}), "the typed seam between a runtime and its peer"),
    "route": (
        frozenset({"rpc/routes.py", "serve/routing.py"}),
        "where a message goes: rpc's notification routes, serve's per-stream routing",
    ),
    "attach": (frozenset({"agent/attach_handler.py"}), "a second client joins a session"),
    "proxy": (frozenset(), "nothing: the bridge's core is bridge/runner.py"),
    "local": (frozenset(), "nothing: the in-process bridge end is bridge/inprocess.py"),
    "restore": (frozenset(), "nothing: taking over a stream is serve/takeover_*.py"),
    "rebuild": (frozenset(), "nothing: the takeover's plan is serve/takeover_plan.py"),
}


def modules() -> list[str]:
    """Every module of the package, relative to src/acp2, in posix form."""
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py"))


def test_each_word_names_one_kind_of_module() -> None:
    bad = [
        f"{module}: '{word}' means {meaning}"
        for module in modules()
        for word, (allowed, meaning) in ONE_MEANING.items()
        if word in Path(module).stem and module not in allowed
    ]
    assert not bad, "module names that reuse a word for something else:\n" + "\n".join(bad)


def test_every_module_the_rule_names_exists() -> None:
    named = {m for allowed, _ in ONE_MEANING.values() for m in allowed}
    assert named <= set(modules())
