"""What the worker imports before it forks, and whether forking it is then safe."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

from mlsmoke.warm import freshness


def preload(names: list[str], state: dict[str, Any]) -> str:
    """Import torch and the dependencies; why not, when torch cannot be imported."""
    try:
        import torch
    except Exception as error:  # the project may not use torch at all
        return f"torch does not import here: {type(error).__name__}: {error}"
    state["torch_seed"] = torch.initial_seed()
    for module in import_names(names):
        try:
            importlib.import_module(module)
        except Exception:  # the job will meet the same error, and report it
            pass
    state["preloaded"] = sorted(
        name for name in sys.modules if "." not in name and not name.startswith("_")
    )
    return ""


def import_names(distributions: list[str]) -> list[str]:
    """The top-level modules of ``distributions``, read from their own metadata only
    (scanning every installed distribution costs more than importing torch's numpy)."""
    import importlib.metadata

    modules: set[str] = set()
    for name in distributions:
        try:
            distribution = importlib.metadata.distribution(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
        listed = (distribution.read_text("top_level.txt") or "").split()
        listed = listed or sorted(_top_levels(distribution.files or []))
        # torch also lists functorch and torchgen: its own name is what it means
        named = [module for module in listed if _normal(module) == _normal(name)]
        modules.update(named or listed)
    return sorted(module for module in modules if not module.startswith("_"))


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _top_levels(files: list) -> set[str]:
    found = set()
    for file in files:
        parts = file.parts
        if len(parts) > 1 and not parts[0].endswith((".dist-info", ".data")):
            found.add(parts[0])
        elif len(parts) == 1 and file.suffix == ".py":
            found.add(file.stem)
    return {name for name in found if name.isidentifier()}


def unsafe(root: Path) -> str:
    """Why forking this process would not give a job a clean process; '' if it would.

    A Python thread could hold a lock at the fork, so none may run. Native thread
    pools started at import (OpenBLAS's) register fork handlers, as DataLoader's forked
    workers rely on; a pool that grows after startup retires the worker instead."""
    if threading.active_count() > 1:
        return "importing the dependencies started a Python thread"
    torch = sys.modules["torch"]
    if torch.cuda.is_initialized():
        return "importing the dependencies initialised CUDA"
    project = [
        name
        for name in freshness.project_modules_loaded(root)
        if name.split(".")[0] != "mlsmoke"
    ]
    if project:
        return f"importing the dependencies imported the project's {project[0]}"
    return ""


def native_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1
