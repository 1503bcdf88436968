"""The overfit-batch gate: train the project's model on one batch until it memorizes it.

The hook side (``main``, ``settings``, ``cache``, ``result``, ``report``) never imports
torch: a cached pass must stay fast. ``check`` is the Python API; it imports torch on
first use, through the module ``__getattr__`` below.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check"]


def __getattr__(name: str) -> Any:
    if name == "check":
        from mlsmoke.overfit.api import check

        return check
    raise AttributeError(f"module 'mlsmoke.overfit' has no attribute {name!r}")
