"""`python -m xlalign.cli`: the same as the `xlalign` command (torchrun workers use it)."""

import sys

from xlalign.cli import main

sys.exit(main())
