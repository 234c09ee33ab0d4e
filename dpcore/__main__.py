"""``python -m dpcore``: see :mod:`dpcore.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
