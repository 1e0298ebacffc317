"""Run the notebooks in quick mode under pytest (``--nbmake``): small draws, thinned curves.

nbmake starts each notebook's kernel with this process's environment, so setting the
variables here, when pytest imports this file, reaches the notebooks.  A value already set
(e.g. ``BAYESLAW_NB_DRAWS=1000 python -m pytest notebooks``) wins.
"""

import os

os.environ.setdefault("BAYESLAW_NB_DRAWS", "100")
os.environ.setdefault("BAYESLAW_NB_TUNE", "100")
