"""``python -m paynb.cli``: the ``paynb`` command."""

import sys

from paynb.cli import main

if __name__ == "__main__":  # not when a tool imports every module of paynb
    sys.exit(main())
