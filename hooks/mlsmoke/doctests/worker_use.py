"""Whether a doctest run uses the warm worker: only where it pays.

The worker's start is ``import torch`` and the project's dependencies, a second or
more; a fresh interpreter that imports only numpy, or nothing but the standard
library, is ready in a fraction of that. So the run waits for the worker only when its
modules import torch; when they import only dependencies the worker preloads, it uses
a worker that takes the job at once and never waits for one; otherwise, it starts a
process of its own at once. The needs are those the doctest scan read from the source
(:mod:`.requirements`): the module-level imports of the files and of the project
modules they import, and the imports of their examples.
"""

from __future__ import annotations

from collections.abc import Iterable

from mlsmoke.project_process import WorkerUse

TORCH = "torch"


def worker_use(needs: Iterable[str], preloaded: Iterable[str]) -> WorkerUse:
    """How a run whose top-level third-party modules are ``needs`` uses a worker that
    preloads the distributions ``preloaded``."""
    needed = {_normal(name) for name in needs}
    if _normal(TORCH) in needed:
        return WorkerUse.WAIT
    if needed & {_normal(name) for name in preloaded}:
        return WorkerUse.IF_READY
    return WorkerUse.NONE


def _normal(name: str) -> str:
    """A module or distribution name as both are compared: ``scikit_learn`` and
    ``Scikit-Learn`` alike (a distribution named unlike its module, as Pillow's
    ``PIL``, does not match: such a run starts its own process)."""
    return name.lower().replace("-", "_").replace(".", "_")
