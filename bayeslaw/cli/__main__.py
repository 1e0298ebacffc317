"""``python -m bayeslaw.cli``: the ``bayeslaw`` command."""

from .main import main

raise SystemExit(main())
