"""`python -m app.cli`: the same entry point as the `contexts` script."""

import sys

from app.cli import main

sys.exit(main())
