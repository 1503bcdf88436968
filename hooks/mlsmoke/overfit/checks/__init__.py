"""The registry of checks: each reads a GateRun and returns warnings (maybe none).

Checks run whether the gate passes or fails. A new check is a new module here plus a
line in REGISTRY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlsmoke.overfit.evidence import GateRun
    from mlsmoke.overfit.result import Warning

Check = Callable[["GateRun"], "list[Warning]"]

REGISTRY: list[Check] = []


def run_checks(run: GateRun) -> list[Warning]:
    """Every check's warnings for ``run``, in REGISTRY order."""
    return [warning for check in REGISTRY for warning in check(run)]
