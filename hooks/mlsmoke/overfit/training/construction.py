"""Where the project built its optimizer: the file and line of its own code that
constructed the ``torch.optim.Optimizer``, so an lr hint names the line to change.

While a project's optimizer factory runs, ``Optimizer.__init__`` records the first
frame outside torch and mlsmoke on the way up its call stack: the line of
``torch.optim.AdamW(groups, lr=...)`` in ``model.py``, not the glue that called
``model.configure_optimizers()``.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

import mlsmoke

_NOT_THE_PROJECT = tuple(
    str(Path(package.__file__).resolve().parent) + os.sep
    for package in (torch, mlsmoke)
)
# The first parameter of an optimizer factory that takes the model, not its params.
MODEL_PARAMETER_NAMES = {"model", "module", "net", "network", "pl_module"}


@dataclass
class Site:
    """Where the first optimizer was constructed; empty until one is."""

    path: str = ""
    line: int = 0
    function: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.path else ""


def takes_model(factory: Callable[..., Any]) -> bool:
    """Whether an optimizer factory's first parameter is the model: annotated as a
    module, or named ``model``, ``module``, ``net`` (``params`` is the parameters)."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
    first = next((p for p in parameters if p.kind in positional), None)
    if first is None:
        return False
    annotation = first.annotation
    if isinstance(annotation, type) and issubclass(annotation, torch.nn.Module):
        return True
    # Under `from __future__ import annotations` the annotation is only a name.
    if isinstance(annotation, str) and annotation.strip("\"'").rsplit(".", 1)[-1] in (
        "Module",
        "LightningModule",
    ):
        return True
    name = first.name.lower()
    return name in MODEL_PARAMETER_NAMES or name.endswith("_model")


def project_frame(frame: Any) -> Site:
    """The first frame from ``frame`` outward that is the project's code."""
    while frame is not None:
        filename = frame.f_code.co_filename
        real = os.path.realpath(filename)
        if not filename.startswith("<") and not real.startswith(_NOT_THE_PROJECT):
            return Site(_shown(real), frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return Site()


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


@contextlib.contextmanager
def optimizer_construction() -> Iterator[Site]:
    """Records, in the Site it yields, where the block first builds an optimizer."""
    site = Site()
    original = torch.optim.Optimizer.__init__

    def recording(self: Any, *args: Any, **kwargs: Any) -> None:
        if not site.path:
            found = project_frame(sys._getframe(1))
            site.path, site.line, site.function = found.path, found.line, found.function
        original(self, *args, **kwargs)

    torch.optim.Optimizer.__init__ = recording  # type: ignore[method-assign]
    try:
        yield site
    finally:
        torch.optim.Optimizer.__init__ = original  # type: ignore[method-assign]


def built_where(site: Site, origin: str) -> str:
    """``origin``, led by the line that constructed the optimizer when it is known:
    ``gate:optimizer at model.py:71`` when ``origin`` built it itself, else
    ``model.py:71 in configure_optimizers, called by gate:optimizer``."""
    if not site.path:
        return origin
    if origin.rsplit(":", 1)[-1].rsplit(".", 1)[-1] == site.function:
        return f"{origin} at {site}"
    return f"{site} in {site.function}, called by {origin}"
