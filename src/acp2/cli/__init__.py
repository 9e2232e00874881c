"""The ``acp2`` command line: argument parsing and wiring only."""
