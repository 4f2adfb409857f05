"""`python -m fxexport`: the command line."""

from .cli import main

raise SystemExit(main())
