"""The xdist test order (tests/helpers/schedule.py): slow files first in every block."""

from __future__ import annotations

from pathlib import Path

from helpers.schedule import FILE_SECONDS, block_sizes, deal

TESTS = Path(__file__).parent


def file_of(item: str) -> str:
    return item.split("::")[0]


def items(*files: tuple[str, int]) -> list[str]:
    return [f"{name}::t{i}" for name, count in files for i in range(count)]


def test_block_sizes_are_the_shares_worksteal_sends_and_add_up() -> None:
    assert block_sizes(10, 4) == [2, 2, 3, 3]
    assert block_sizes(3330, 4) == [832, 832, 833, 833]
    assert block_sizes(1, 4) == [0, 0, 0, 1]


def test_without_workers_the_order_is_kept() -> None:
    tests = items(("fast.py", 3), ("slow.py", 2))
    assert deal(tests, 1, file_of, {"slow.py": 9}) == tests


def test_every_block_starts_with_slow_work_and_the_fast_rest_fills_it_in_order() -> None:
    tests = items(("a.py", 6), ("s1.py", 2), ("b.py", 6), ("s2.py", 2))
    ordered = deal(tests, 2, file_of, {"s1.py": 5, "s2.py": 4})

    first, second = ordered[:8], ordered[8:]
    assert first[:2] == items(("s1.py", 2))
    assert second[:2] == items(("s2.py", 2))
    fast = [t for t in ordered if not t.startswith("s")]
    assert fast == items(("a.py", 6), ("b.py", 6))


def test_each_item_appears_once_and_a_slow_file_stays_whole_in_its_own_order() -> None:
    tests = items(("a.py", 3), ("s1.py", 4), ("s2.py", 3), ("s3.py", 2), ("b.py", 2))
    ordered = deal(tests, 3, file_of, {"s1.py": 9, "s2.py": 5, "s3.py": 4})

    assert sorted(ordered) == sorted(tests)
    for name in ("s1.py", "s2.py", "s3.py"):
        positions = [i for i, t in enumerate(ordered) if file_of(t) == name]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
        assert [ordered[i] for i in positions] == [t for t in tests if file_of(t) == name]


def test_slow_files_are_packed_longest_first_into_the_least_loaded_block() -> None:
    seconds = {"s1.py": 10, "s2.py": 6, "s3.py": 5}
    tests = items(("s1.py", 1), ("s2.py", 1), ("s3.py", 1), ("a.py", 3))
    ordered = deal(tests, 2, file_of, seconds)

    # s1 alone in one block; s2 and s3 (11 s together) in the other.
    assert ordered[:3] == ["s1.py::t0", "a.py::t0", "a.py::t1"]
    assert ordered[3:5] == ["s2.py::t0", "s3.py::t0"]


def test_every_file_the_table_names_exists() -> None:
    missing = [name for name in FILE_SECONDS if not (TESTS / name).is_file()]
    assert missing == []
