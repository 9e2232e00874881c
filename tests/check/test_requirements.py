"""The requirement catalogue: ids, levels, drafts and counterparts are consistent."""

from __future__ import annotations

import re

from acp2.check import catalog
from acp2.check.requirements import DRAFTS, REQUIREMENTS, V1, V1_KEYS, Level

CHECKLIST_ID = re.compile(r"^(?:TR|IN|SS|PL|MU|TC|TM|PR|EX|CO|US)-\d\d$")
V1_ID = re.compile(r"^V1-(?:TR|IN|SS|PL|PR|EX)-\d\d$")
V2_ROWS = [req for req in REQUIREMENTS.values() if req.drafts != (V1,)]
V1_ROWS = [req for req in REQUIREMENTS.values() if req.drafts == (V1,)]


def test_every_row_cites_a_checklist_id_or_the_schema() -> None:
    for req in V2_ROWS:
        assert CHECKLIST_ID.match(req.id) or req.id == "SCHEMA", req.key
        assert req.key.split(":")[0] in (req.id, "D-01", "D-09", "D-25"), req.key


def test_every_v1_row_cites_a_v1_id_of_the_requirement_list_or_the_schema() -> None:
    assert V1_ROWS
    for req in V1_ROWS:
        assert V1_ID.match(req.id) or (req.key, req.id) == ("V1-SCHEMA", "SCHEMA"), req.key
        assert req.id == "SCHEMA" or req.id in catalog.load().entries, req.key
        assert req.key.split(":")[0] in (req.id, "V1-SCHEMA"), req.key
        assert req.diff is None
        assert req.counterpart is None
        assert req.draft_label == V1


def test_every_v2_row_a_generic_probe_judges_has_a_v1_row_for_v1_agents() -> None:
    for v2, v1 in V1_KEYS.items():
        assert REQUIREMENTS[v2].drafts != (V1,), v2
        assert REQUIREMENTS[v1].drafts == (V1,), v1


def test_rows_of_some_drafts_only_name_the_difference_they_come_from() -> None:
    for req in V2_ROWS:
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
    for req in V2_ROWS:
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
