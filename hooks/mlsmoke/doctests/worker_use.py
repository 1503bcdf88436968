"""Whether a doctest run uses the warm worker: only where it pays.

The worker's start is ``import torch`` and the project's dependencies, a second or
more; a fresh interpreter that imports only numpy, or nothing but the standard
library, is ready in a fraction of that. Even a ready worker does not pay for such a
run: five numpy-only files took 0.65 s forked from a ready worker against 0.49 s in a
fresh process (``python -m benchmarks --only doctest_worker``), as reaching the worker
and forking it cost more than importing numpy. So the run waits for the worker when its
modules import torch, and otherwise starts a process of its own at once. The needs are
those the doctest scan read from the source (:mod:`.requirements`): the module-level
imports of the files and of the project modules they import, and the imports of their
examples.
"""

from __future__ import annotations

from collections.abc import Iterable

from mlsmoke.project_process import WorkerUse

TORCH = "torch"


def worker_use(needs: Iterable[str]) -> WorkerUse:
    """How a run whose top-level third-party modules are ``needs`` uses the worker."""
    return WorkerUse.WAIT if TORCH in set(needs) else WorkerUse.NONE
