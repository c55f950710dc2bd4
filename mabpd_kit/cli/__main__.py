"""``python -m mabpd_kit.cli ...``: the same as the ``mabpd`` command."""

import sys

from mabpd_kit.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
