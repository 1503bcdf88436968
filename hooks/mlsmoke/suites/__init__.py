"""Regression suites for trained models: ``mlsmoke suites record`` keeps the examples
a checkpoint gets most wrong (and named slices, and examples listed by hand) with
their baselines; ``mlsmoke suites check`` fails a checkpoint that gets worse on them.

``mlsmoke.suites.check(...)`` is the pytest API (``api.py``); torch is imported when
it is called, not when the command imports this package.
"""

from __future__ import annotations

from typing import Any


def check(*args: Any, **kwargs: Any) -> Any:
    """See :func:`mlsmoke.suites.api.check`."""
    from mlsmoke.suites.api import check as run

    return run(*args, **kwargs)
