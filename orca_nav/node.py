"""``python -m orca_nav.node``: runs the orca_nav node (orca_nav.ros.main)."""

import sys

from orca_nav.ros.main import main

if __name__ == '__main__':
    sys.exit(main())
