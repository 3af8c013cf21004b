"""``python -m orca_nav.demo``: runs the fleet demo (orca_nav.sim.demo)."""

import sys

from orca_nav.sim.demo import main

if __name__ == '__main__':
    sys.exit(main())
