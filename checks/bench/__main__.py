"""``python -m checks.bench [--quick] [--out reports] [--with-verify] ...`` (see ``--help``)."""

import sys

from checks.bench.harness import main

sys.exit(main())
