"""Run a library case through the gate, as the hand-written catalog does, on one CPU
thread: these models are small enough that a second thread only adds overhead, and
the other core stays free for the rest of the machine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from .. import runner
from ..cases import Case


@contextmanager
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def run_case(case: Case) -> runner.Outcome:
    with one_thread():
        return runner.run_case(case)
