"""``python -m bpeproof``: the command line."""

from bpeproof.cli import main

raise SystemExit(main())
