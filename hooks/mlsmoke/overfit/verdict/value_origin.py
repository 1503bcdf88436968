"""Where a value that is no tensor first reached a module, in one forward of a fresh
model: the module whose input it was, the value, and an earlier module's mapping
output that holds it as a key (unpacking a dict, or a ModelOutput, yields its keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import batch_fields, seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


@dataclass(frozen=True)
class Origin:
    module: str  # the first module given the value ("" is the model itself)
    value: str  # repr, shortened
    argument: str  # "argument 0", or a keyword's name
    key_of: str | None  # the module whose mapping output has the value as a key


def first_non_tensor(run: GateRun, kind: str) -> Origin | None:
    """The first module called with a value of type ``kind`` (e.g. "str")."""
    return remember(run, ("non-tensor", kind), lambda: _trace(run, kind))


def batch_holds(run: GateRun, kind: str) -> bool:
    """Whether a field of the batch, as the model and the loss receive it, holds a
    value of type ``kind`` (a batch that is not a container is its one field)."""

    def look() -> bool:
        try:
            with seeded(run):
                _, batch = forward_probes.fresh_model_and_batch(run)
        except Exception:
            return False
        return any(type(value).__name__ == kind for _, value in batch_fields(batch))

    return remember(run, ("batch-holds", kind), look)


def _trace(run: GateRun, kind: str) -> Origin | None:
    found: list[Origin] = []
    mappings: list[tuple[str, set[str]]] = []

    def before(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            if found:
                return
            given = [(f"argument {i}", v) for i, v in enumerate(args)]
            given += list(kwargs.items())
            for argument, value in given:
                if type(value).__name__ == kind:
                    found.append(Origin(name, _short(value), argument,
                                        _key_of(value, mappings)))  # fmt: skip
                    return

        return hook

    def after(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict, output: Any) -> None:
            if isinstance(output, Mapping) or hasattr(output, "keys"):
                try:
                    mappings.append((name, {str(k) for k in output.keys()}))
                except Exception:
                    pass

        return hook

    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
    except Exception:
        return None
    handles = []
    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(name), with_kwargs=True))
        handles.append(module.register_forward_hook(after(name), with_kwargs=True))
    model.eval()
    try:
        with seeded(run), torch.no_grad():
            forward_probes.loss_of(run, model, batch)
    except Exception:
        pass  # the error is expected: the trace up to it is the evidence
    finally:
        for handle in handles:
            handle.remove()
    return found[0] if found else None


def _key_of(value: Any, mappings: list[tuple[str, set[str]]]) -> str | None:
    if not isinstance(value, str):
        return None
    return next((name for name, keys in reversed(mappings) if value in keys), None)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
