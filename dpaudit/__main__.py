"""``python -m dpaudit``: the same as the ``dpaudit`` command."""

import sys

from dpaudit.cli import main

sys.exit(main())
