"""``python -m checks.runners.bench [--quick] [--out reports] [--with-verify] ...`` (see ``--help``)."""

import sys

from checks.runners.bench.harness import main

sys.exit(main())
