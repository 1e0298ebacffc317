"""``python -m bayeslaw.cli``: the ``bayeslaw`` command."""

from .commands import main

raise SystemExit(main())
