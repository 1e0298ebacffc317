"""Run the notebooks in quick mode under pytest (``--nbmake``): small draws, thinned curves.

nbmake starts each notebook's kernel with this process's environment, so setting the
variables here, when pytest imports this file, reaches the notebooks.  A value already set
(e.g. ``BAYESLAW_NB_DRAWS=1000 python -m pytest notebooks``) wins.
"""

import os
from pathlib import Path

import pytest

os.environ.setdefault("BAYESLAW_NB_DRAWS", "100")
os.environ.setdefault("BAYESLAW_NB_TUNE", "100")

#: The public data sets beside the repository (CI has them; a user's clone may not).
SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
#: Notebooks that read SHARED_DATA (the package itself never needs it).
NEEDS_SHARED_DATA = frozenset({"04_real_data.ipynb"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the notebooks that read the shared data when it is absent, except in CI.

    With ``CI=true`` nothing is skipped: a missing folder there fails the notebook.
    """
    if SHARED_DATA.is_dir() or os.environ.get("CI") == "true":
        return
    reason = (f"needs the shared data folder {SHARED_DATA} (../shared/data beside the "
              "repository), which is absent; it runs in CI (CI=true)")
    for item in items:
        if Path(str(item.path)).name in NEEDS_SHARED_DATA:
            item.add_marker(pytest.mark.skip(reason=reason))
