"""Exception hierarchy: every user-facing failure is a ``BayeslawError``."""

from __future__ import annotations


class BayeslawError(Exception):
    """Base class of every error bayeslaw raises on purpose."""


class DataError(BayeslawError, ValueError):
    """The input table is unusable; the message names the column/row and the fix."""


class SpecError(BayeslawError, ValueError):
    """A law / prior / hierarchy specification is invalid or inconsistent with the data."""


class ConvergenceError(BayeslawError, RuntimeError):
    """Sampling diagnostics failed and the caller asked for strictness."""


class FitFileError(BayeslawError, OSError):
    """A saved fit cannot be read (wrong file, wrong format version)."""
