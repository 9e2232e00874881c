"""The requirement catalogue: ids, levels, drafts and counterparts are consistent."""

from __future__ import annotations

import re

from acp2.check.requirements import DRAFTS, REQUIREMENTS, Level

CHECKLIST_ID = re.compile(r"^(?:TR|IN|SS|PL|MU|PR|EX)-\d\d$")


def test_every_row_cites_a_checklist_id_or_the_schema() -> None:
    for req in REQUIREMENTS.values():
        assert CHECKLIST_ID.match(req.id) or req.id == "SCHEMA", req.key
        assert req.key.split(":")[0] in (req.id, "D-01", "D-09", "D-25"), req.key


def test_rows_of_one_draft_name_the_difference_they_come_from() -> None:
    for req in REQUIREMENTS.values():
        assert set(req.drafts) <= set(DRAFTS)
        assert req.drafts
        if len(req.drafts) == 1:
            assert req.diff is not None
            assert req.diff == "schema" or req.diff.startswith("D-")
            assert req.draft_label == req.drafts[0]
        else:
            assert req.diff is None
            assert req.draft_label == "both"


def test_counterparts_exist_and_belong_to_the_other_draft() -> None:
    for req in REQUIREMENTS.values():
        if req.counterpart is None:
            continue
        twin = REQUIREMENTS[req.counterpart]
        assert twin.drafts != req.drafts, req.key
        assert len(twin.drafts) == 1, req.key
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
        assert diffs[diff] == {"aug", "nov"}, diff
