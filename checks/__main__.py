import sys

from checks.runners.cli import main

if __name__ == "__main__":  # Dask's worker processes may import this module: they must not run the CLI
    sys.exit(main())
