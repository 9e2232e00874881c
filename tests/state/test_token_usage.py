"""Token usage on the idle ``state_update`` (Preview, unstable): the state keeps the last
turn's report and sums every report, and a replay that restates the turns' usage does not
count it twice."""

from __future__ import annotations

from typing import Any

from state_updates import decode_update, feed, state_update

from acp2.schema import Usage
from acp2.state import ReplayMerge, TokenTotals


def idle(usage: Any, **fields: Any) -> dict[str, Any]:
    """An idle ``state_update`` carrying ``usage``."""
    return {**state_update("idle", stopReason="end_turn", **fields), "usage": usage}


def usage(total: int, inp: int, out: int, **optional: int) -> dict[str, Any]:
    """A usage object with the three required counts and any optional ones."""
    return {"totalTokens": total, "inputTokens": inp, "outputTokens": out, **optional}


def test_an_idle_report_is_the_turns_usage_and_starts_the_totals() -> None:
    state = feed(
        state_update("running"),
        idle(usage(30, 20, 10, thoughtTokens=4, cachedReadTokens=15, cachedWriteTokens=2)),
    )
    assert isinstance(state.turn_usage, Usage)
    assert state.turn_usage.total_tokens == 30
    assert state.token_totals == TokenTotals(
        turns=1, total=30, input=20, output=10, thought=4, cached_read=15, cached_write=2
    )


def test_each_turn_adds_to_the_totals_and_missing_optional_counts_add_nothing() -> None:
    state = feed(
        state_update("running"),
        idle(usage(30, 20, 10, cachedReadTokens=15)),
        state_update("running"),
        idle(usage(5, 3, 2)),
    )
    assert state.turn_usage.total_tokens == 5
    assert state.token_totals == TokenTotals(turns=2, total=35, input=23, output=12, cached_read=15)
    assert state.completed == 2


def test_no_report_or_a_malformed_one_leaves_usage_unset() -> None:
    state = feed(state_update("running"), state_update("idle", stopReason="end_turn"))
    assert state.turn_usage is None
    assert state.token_totals is None
    feed(state_update("running"), idle({"totalTokens": "lots"}), state=state)
    assert state.turn_usage is None
    assert state.token_totals is None
    assert state.stop_reason == "end_turn"


def test_usage_on_a_state_other_than_idle_is_not_a_turns_usage() -> None:
    state = feed({**state_update("running"), "usage": usage(1, 1, 0)})
    assert state.turn_usage is None
    assert state.token_totals is None


def test_a_replay_restating_usage_restarts_the_totals_and_one_without_keeps_them() -> None:
    turns = [state_update("running"), idle(usage(10, 6, 4)), state_update("running")]
    turns.append(idle(usage(20, 15, 5)))
    state = feed(*turns)
    assert state.token_totals is not None
    assert state.token_totals.total == 30
    merge = ReplayMerge(state)
    for update in turns:
        assert not merge.absorb(state, decode_update(update).update)  # news: reduced
        feed(update, state=state)
    merge.finish(state)
    assert state.token_totals == TokenTotals(turns=2, total=30, input=21, output=9)
    quiet = ReplayMerge(state)
    assert not quiet.absorb(state, decode_update(state_update("idle")).update)
    quiet.finish(state)
    assert state.token_totals.total == 30


def test_a_childs_mirrored_state_keeps_its_usage() -> None:
    update = {
        "sessionUpdate": "subagent_update",
        "sessionId": "sess_child",
        "state": {"state": "idle", "usage": usage(7, 5, 2)},
    }
    state = feed(update)
    child_state = state.subagents["sess_child"].state
    assert child_state.usage == Usage(total_tokens=7, input_tokens=5, output_tokens=2)
    assert state.token_totals is None  # the parent's totals are the parent's own turns
