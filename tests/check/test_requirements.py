"""The requirement catalogue: ids, levels, drafts and counterparts are consistent."""

from __future__ import annotations

import re

from acp2.check.requirements import DRAFTS, REQUIREMENTS, Level

CHECKLIST_ID = re.compile(r"^(?:TR|IN|SS|PL|MU|PR|EX)-\d\d$")


def test_every_row_cites_a_checklist_id_or_the_schema() -> None:
    for req in REQUIREMENTS.values():
        assert CHECKLIST_ID.match(req.id) or req.id == "SCHEMA", req.key
        assert req.key.split(":")[0] in (req.id, "D-01", "D-09", "D-25"), req.key


def test_rows_of_some_drafts_only_name_the_difference_they_come_from() -> None:
    for req in REQUIREMENTS.values():
        assert set(req.drafts) <= set(DRAFTS)
        assert req.drafts
        if req.drafts != DRAFTS:
            assert req.diff is not None
            assert req.diff == "schema" or req.diff.startswith("D-")
            assert req.draft_label in (req.drafts[0], "nov+")
        else:
            assert req.diff is None
            assert req.draft_label == "all"


def test_the_preview_keeps_every_nov_rule_but_the_schema() -> None:
    for req in REQUIREMENTS.values():
        if req.diff != "schema":
            assert req.applies_to("nov") == req.applies_to("preview"), req.key
    schema_rows = [r for r in REQUIREMENTS.values() if r.diff == "schema"]
    assert sorted(r.drafts for r in schema_rows) == [("aug",), ("nov",), ("preview",)]


def test_counterparts_exist_and_belong_to_the_other_draft() -> None:
    for req in REQUIREMENTS.values():
        if req.counterpart is None:
            continue
        twin = REQUIREMENTS[req.counterpart]
        assert not set(twin.drafts) & set(req.drafts), req.key
        assert twin.drafts != DRAFTS, req.key
        assert twin.diff == req.diff, req.key


def test_capability_rows_name_their_capability() -> None:
    for req in REQUIREMENTS.values():
        assert (req.level is Level.CAP) == (req.capability is not None), req.key


def test_the_three_known_disagreements_have_rows_in_both_drafts() -> None:
    diffs = {req.diff: set() for req in REQUIREMENTS.values() if req.diff}
    for req in REQUIREMENTS.values():
        if req.diff:
            diffs[req.diff].update(req.drafts)
    for diff in ("D-01", "D-05", "D-09"):  # batches, unsupported version, prompt receipt
        assert diffs[diff] == set(DRAFTS), diff
