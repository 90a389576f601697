"""`python -m gym.cli`: the `kgym` command."""

import sys

from gym.cli import app

if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
