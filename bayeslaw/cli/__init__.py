"""The ``bayeslaw`` command.

Its argument parser and subcommands, which call the library and print. May import every
package.
"""

from __future__ import annotations

from .commands import main

__all__ = [
    "main",
]
