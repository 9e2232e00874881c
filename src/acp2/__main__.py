"""``python -m acp2``: the same as the ``acp2`` command."""

import sys

from acp2.cli.main import main

sys.exit(main())
