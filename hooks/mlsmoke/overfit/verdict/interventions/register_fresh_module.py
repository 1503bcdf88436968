"""Register the fresh module: the same training with each module forward builds at
every call built once, registered with the model before the optimizer is built, so
that it trains. Tests a layer built in ``forward``.

Construction is intercepted where the project's code names the class through
``torch.nn`` (``nn.Linear(...)``): within forward, that name returns the module the
same line built the first time.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import shared_batch
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with the module forward builds made once and registered"


def check(run: GateRun, kinds: list[str]) -> runner.Outcome:
    classes = [getattr(torch.nn, kind) for kind in kinds if hasattr(torch.nn, kind)]
    batch = next(iter(shared_batch(run)), None)
    if not classes or batch is None:
        return runner.Outcome(CHANGE, skipped="its class is not one torch.nn names")
    return runner.probe(run, CHANGE, model_factory=_built_once(run, batch, classes))


def _built_once(run: GateRun, batch: Any, classes: list[type]) -> Callable[[], Any]:
    def build() -> Any:
        model = run.model_factory()
        cache: dict[tuple, torch.nn.Module] = {}
        forward = model.forward

        def cached_forward(*args: Any, **kwargs: Any) -> Any:
            with _constructions_cached(cache, classes):
                return forward(*args, **kwargs)

        model.forward = cached_forward
        with torch.no_grad():
            forward_probes.loss_of(run, model, batch)  # builds them, once
        if not cache:
            raise RuntimeError("no construction was intercepted")
        for index, module in enumerate(cache.values()):
            model.add_module(f"built_in_forward_{index}", module)
        return model

    return build


@contextlib.contextmanager
def _constructions_cached(cache: dict, classes: list[type]) -> Iterator[None]:
    originals = {cls.__name__: cls for cls in classes}

    def once(cls: type) -> Callable[..., torch.nn.Module]:
        def construct(*args: Any, **kwargs: Any) -> torch.nn.Module:
            caller = sys._getframe(1)
            key = (cls, caller.f_code.co_filename, caller.f_lineno)
            if key not in cache:
                cache[key] = cls(*args, **kwargs)
            return cache[key]

        return construct

    for name, cls in originals.items():
        setattr(torch.nn, name, once(cls))
    try:
        yield
    finally:
        for name, cls in originals.items():
            setattr(torch.nn, name, cls)
