"""The ``acp2 check`` command line: its defaults."""

from __future__ import annotations


def test_acp2_check_judges_against_the_preview_unless_told_otherwise() -> None:
    import argparse

    from acp2.check import CheckOptions
    from acp2.cli.check_cmd import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    assert parser.parse_args(["check", "--", "agent"]).draft == "preview"
    assert CheckOptions(argv=["agent"]).draft == "preview"
