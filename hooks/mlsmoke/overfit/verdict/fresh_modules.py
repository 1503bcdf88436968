"""Modules with trainable parameters that forward builds anew at every call: a head
built inside ``forward`` (``nn.Linear(d, k)(h)``, or ``self.head = nn.Linear(...)``
there). Its weights are new random ones at every step, and the optimizer, built
before, never holds them.

The probe calls the loss twice on a fresh model with a hook on every module call;
a module the model did not hold before the calls, and that the second call does not
call again, was built by the first.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes, project_frames
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


@dataclass(frozen=True)
class FreshModule:
    kind: str  # its class's name, e.g. "Linear"
    described: str  # "Linear(in_features=16, out_features=3, bias=True)"
    where: str | None  # the project's line that called it


def fresh_modules(run: GateRun) -> list[FreshModule]:
    """The trainable modules forward builds at every call, once per gate run."""
    return remember(run, "fresh-modules", lambda: _two_calls(run))


def _two_calls(run: GateRun) -> list[FreshModule]:
    calls: list[list[tuple[torch.nn.Module, str | None]]] = []
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
            model.train()
            owned = {id(module) for module in model.modules()}
            hook = _recorder(owned, calls, run.evidence.working_directory)
            handle = torch.nn.modules.module.register_module_forward_hook(hook)
            try:
                for _ in range(2):
                    calls.append([])
                    forward_probes.loss_of(run, model, batch)
            finally:
                handle.remove()
    except Exception:
        return []
    again = {id(module) for module, _ in calls[1]}
    return [
        FreshModule(type(module).__name__, repr(module), where)
        for module, where in calls[0]
        if id(module) not in again
    ]


def _recorder(owned: set[int], calls: list, working_directory: str | None) -> Any:
    libraries = project_frames.library_directories()

    def record(module: torch.nn.Module, args: Any, output: Any) -> None:
        if id(module) in owned or not _trains(module):
            return
        if any(module is seen for seen, _ in calls[-1]):
            return
        frame = project_frames.innermost_project_frame(
            traceback.extract_stack(), libraries
        )
        where = (
            None
            if frame is None
            else project_frames.frame_line(frame, working_directory)
        )
        calls[-1].append((module, where))

    return record


def _trains(module: torch.nn.Module) -> bool:
    return any(p.requires_grad for p in module.parameters(recurse=False))
