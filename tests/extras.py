"""One rule for the test extra's optional packages: skipped outside CI, failed in CI.

Every package of the ``test`` extra must be installed where ``CI=true``: a test that needs one
fails there when it is missing (so that CI cannot pass by skipping), and skips with the reason
elsewhere (``tests/test_logs.py``'s rule, for every test module).
"""

from __future__ import annotations

import importlib
import os
import types

import pytest


def need(module: str, why: str, *, module_level: bool = False) -> types.ModuleType:
    """Import ``module``; skip without it (saying ``why``), except in CI, where it fails.

    ``module_level``: called at a test module's top level (skips or fails the whole module).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is in the test extra ({why}): it must be installed in CI "
                        "(CI=true)", pytrace=False)
        pytest.skip(f"needs {module}: {why} (pip install '.[test]'); it runs in CI (CI=true)",
                    allow_module_level=module_level)
