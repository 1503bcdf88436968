"""Library trainers a training script may train through: transformers' ``Trainer``
and Lightning's ``Trainer``. Each counts its own steps, from its epochs, and builds
its lr schedule over that count; a script of 3 short epochs ends itself, its lr
decayed to 0, long before the gate's max-steps. While the gate runs the script, each
trainer is given the gate's step budget through its own setting instead (``max_steps``,
no limit on epochs), so that the run and a schedule built over it last as long as the
gate needs.

A trainer module is patched when the script imports it, or at once when this process
imported it before; every patch is undone when the run ends.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from mlsmoke.overfit.training.evidence import Evidence

# What a trainer ran for before the gate set its steps: shown in -v, and read by the
# diagnosis of a script that ended itself.
Extend = Callable[[Any, int], str]


def _extend_transformers(trainer: Any, steps: int) -> str:
    args = trainer.args
    own = (
        f"max_steps={args.max_steps}"
        if args.max_steps > 0
        else f"num_train_epochs={args.num_train_epochs:g}"
    )
    args.max_steps = steps
    return f"transformers' Trainer: max_steps={steps}, for its own {own}"


def _extend_lightning(trainer: Any, steps: int) -> str:
    loop = trainer.fit_loop
    own = f"max_epochs={loop.max_epochs}, max_steps={loop.max_steps}"
    loop.max_epochs = -1
    loop.epoch_loop.max_steps = steps
    return f"Lightning's Trainer: max_steps={steps}, no max_epochs, for its own {own}"


# An adapter: each library here is the subject, since only its own setting (not the
# objects a rule reads) changes how many steps it runs. The gate's rules stay
# library-blind; a trainer not listed runs for its own steps, and `script-ended`
# judges it from the run alone.
# module -> (class, the method that trains, how to give it the gate's steps)
TRAINERS: dict[str, tuple[str, str, Extend]] = {
    "transformers.trainer": ("Trainer", "train", _extend_transformers),
    "lightning.pytorch.trainer.trainer": ("Trainer", "fit", _extend_lightning),
    "pytorch_lightning.trainer.trainer": ("Trainer", "fit", _extend_lightning),
}


@contextmanager
def trainers_run_for(steps: int, evidence: Evidence) -> Iterator[None]:
    """Every library trainer the script trains through runs for ``steps`` updates;
    what each was set to run for is noted in ``evidence.trainer_steps``."""
    undo: list[Callable[[], None]] = []

    def patch(module: ModuleType) -> None:
        undo.append(_patch(module, steps, evidence))

    finder = _PatchOnImport({name: patch for name in TRAINERS})
    for name in TRAINERS:
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for step in reversed(undo):
            step()


def _patch(module: ModuleType, steps: int, evidence: Evidence) -> Callable[[], None]:
    class_name, method, extend = TRAINERS[module.__name__]
    owner = getattr(module, class_name, None)
    original = getattr(owner, method, None)
    if owner is None or original is None:
        return lambda: None

    @functools.wraps(original)
    def trains(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            evidence.trainer_steps = extend(self, steps)
        except (AttributeError, TypeError, ValueError):
            pass  # another version's trainer: it runs for its own steps
        return original(self, *args, **kwargs)

    setattr(owner, method, trains)
    return lambda: setattr(owner, method, original)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Runs ``patches[name](module)`` right after module ``name`` is executed."""

    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self.patches = patches

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.patches:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, self.patches[name])
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(
        self, loader: importlib.abc.Loader, patch: Callable[[ModuleType], None]
    ) -> None:
        self.loader, self.patch = loader, patch

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, ...
        return getattr(self.loader, name)
