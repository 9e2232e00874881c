"""Config options for /model and /mode and the status line (acp2.ui.options)."""

from __future__ import annotations

from acp2.schema import SessionConfigBoolean, SessionConfigSelect, SessionConfigSelectOption
from acp2.ui.options import categories, choices, current_name, find_select, pick


def choice(value: str, name: str) -> SessionConfigSelectOption:
    return SessionConfigSelectOption(value=value, name=name)


MODEL = SessionConfigSelect(
    config_id="llm",
    name="Model",
    category="model",
    current_value="b",
    options=[
        SessionConfigSelectOption(group_id="fast", name="Fast", options=[choice("a", "Alpha")]),
        SessionConfigSelectOption(group_id="good", name="Good", options=[choice("b", "Beta")]),
    ],
)
MODE = SessionConfigSelect(
    config_id="mode",
    name="Mode",
    current_value="x",
    options=[choice("x", "Ex"), choice("y", "Why")],
)
FLAG = SessionConfigBoolean(config_id="model", name="Flag", current_value=True)


def test_options_are_found_by_category_else_by_id_and_only_selects_count() -> None:
    options = [FLAG, MODEL, MODE]
    assert find_select(options, "model") is MODEL
    assert find_select(options, "mode") is MODE
    assert categories(options) == {"model", "mode"}
    assert categories([FLAG]) == set()


def test_grouped_choices_are_flattened_and_the_current_one_named() -> None:
    assert choices(MODEL) == [("a", "Alpha"), ("b", "Beta")]
    assert current_name(MODEL) == "Beta"


def test_a_choice_is_picked_by_number_id_or_name() -> None:
    assert pick(MODEL, "1") == "a"
    assert pick(MODEL, "b") == "b"
    assert pick(MODEL, "alpha") == "a"
    assert pick(MODEL, "3") is None
    assert pick(MODEL, "gamma") is None
