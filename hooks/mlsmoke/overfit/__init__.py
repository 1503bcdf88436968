"""The overfit-batch gate: train the project's model on one batch until it memorizes it.

Three sub-packages by role: ``process/`` (the CLI, settings, pass cache and worker
process; no torch), ``training/`` (the loop and what it trains with, in the project's
interpreter) and ``verdict/`` (probes, diagnoses, checks, the result and its report).
``gate.py`` runs one gate from factories to verdict. ``check`` is the Python API; it
imports torch on first use, through the module ``__getattr__`` below.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check"]


def __getattr__(name: str) -> Any:
    if name == "check":
        from mlsmoke.overfit.api import check

        return check
    raise AttributeError(f"module 'mlsmoke.overfit' has no attribute {name!r}")
