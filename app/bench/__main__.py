"""`python -m app.bench` (`make bench`): app.bench.run."""

import sys

from app.bench.run import main

sys.exit(main())
