"""``python -m paynb.cli``: the ``paynb`` command."""

import sys

from paynb.cli import main

sys.exit(main())
