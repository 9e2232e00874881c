"""The requirement list: one data file, a generated page that is never stale, and every
requirement id cited anywhere in the repository resolving to an entry."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from acp2.check import catalog
from acp2.check.requirements import DIFFERENCES, REQUIREMENTS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gen_requirements.py"
#: Where ids are cited: the package, the tests, the docs, and the other shipped sources.
CITING = ("src", "tests", "docs", "examples", "bench", "scripts", "README.md")
#: An id: two capitals (or D) and two digits, e.g. TR-01, SS-25, D-07; a v1 id has the
#: prefix V1- (V1-PL-04).
ID = re.compile(r"\b(?:V1-)?(?:[A-Z]{2}|D)-\d{2}\b")
#: Ids that look like requirement ids on purpose and are none, with where and why.
FAKES = {
    # tests/check/test_results.py: a finding for an id no report row has, to show the
    # report keeps it.
    "XX-99",
}


def _cited() -> dict[str, set[str]]:
    """Every id-shaped string in the citing files, with the files it occurs in."""
    found: dict[str, set[str]] = {}
    for name in CITING:
        top = ROOT / name
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in paths:
            if {"node_modules", "__pycache__"} & set(path.parts):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # a binary file cites nothing
            for match in ID.finditer(text):
                found.setdefault(match.group(), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_cited_requirement_id_is_in_the_list() -> None:
    known = catalog.load().entries
    unknown = {i: sorted(where) for i, where in _cited().items() if i not in known}
    assert set(unknown) == FAKES, f"ids cited but not in the list: {unknown}"


def test_the_deliberate_fakes_are_still_used_and_not_real_ids() -> None:
    cited = _cited()
    for fake in FAKES:
        assert fake in cited, f"{fake} is no longer cited: drop it from FAKES"
        assert fake not in catalog.load().entries


def test_the_generated_page_is_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_a_stale_page_fails_the_check_and_a_rewrite_fixes_it(tmp_path: Path) -> None:
    page = tmp_path / "requirements.md"
    page.write_text("# old\n", encoding="utf-8")
    check = [sys.executable, str(SCRIPT), "--check", "--output", str(page)]
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1
    assert "stale" in stale.stderr
    subprocess.run([sys.executable, str(SCRIPT), "--output", str(page)], check=True)
    assert subprocess.run(check).returncode == 0
    assert "| TR-09 |" in page.read_text(encoding="utf-8")


def test_every_entry_has_a_known_level_a_source_and_one_line_of_text() -> None:
    listed = catalog.load()
    for entry in listed.entries.values():
        assert entry.area in listed.areas, entry.id
        assert set(entry.level.split(" / ")) <= catalog.LEVELS, entry
        assert entry.pages, entry.id
        assert all(re.fullmatch(r"[A-Za-z0-9/ ()-]+", page) for page in entry.pages), entry
        assert entry.text, entry.id
        assert "\n" not in entry.text, entry.id
        assert len(entry.text) <= 200, entry.id


def test_ids_run_in_order_without_gaps_within_each_area() -> None:
    listed = catalog.load()
    for area in listed.areas:
        if area == "V1":
            continue
        numbers = [int(e.id.split("-")[1]) for e in listed.entries.values() if e.area == area]
        assert numbers == list(range(1, len(numbers) + 1)), area


def test_v1_ids_mirror_the_v2_json_rpc_ids_and_otherwise_run_in_order() -> None:
    """V1-TR-09 is TR-09 as judged for a v1 agent (same number); the v1-only handshake,
    session and turn ids (V1-IN, V1-SS, V1-PL) run 01, 02, ... per prefix."""
    listed = catalog.load()
    v1 = [e.id.split("-", 1)[1] for e in listed.entries.values() if e.area == "V1"]
    assert v1
    mirrored = [i for i in v1 if i.split("-")[0] in ("TR", "EX")]
    assert all(i in listed.entries for i in mirrored), mirrored
    for prefix in {i.split("-")[0] for i in v1} - {"TR", "EX"}:
        numbers = [int(i.split("-")[1]) for i in v1 if i.split("-")[0] == prefix]
        assert numbers == list(range(1, len(numbers) + 1)), prefix


def test_the_check_report_takes_its_draft_differences_from_the_list() -> None:
    listed = catalog.load()
    assert {d: listed.text(d) for d in DIFFERENCES} == DIFFERENCES
    cited = {r.diff for r in REQUIREMENTS.values() if r.diff and ID.fullmatch(r.diff)}
    assert cited == set(DIFFERENCES)


def test_every_check_row_cites_a_listed_id() -> None:
    """``SCHEMA`` rows judge schema validity as a whole, which no single id covers."""
    known = catalog.load().entries
    assert {r.id for r in REQUIREMENTS.values()} - set(known) == {"SCHEMA"}
