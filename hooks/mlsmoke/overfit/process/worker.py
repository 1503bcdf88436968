"""The gate's entry point inside the project's interpreter.

Run by the hook through :func:`mlsmoke.interpreter.module_command`::

    python -c <bootstrap> <mlsmoke package> mlsmoke.overfit.process.worker \
        REQUEST RESULT [FD]

REQUEST is a JSON file ``{"root", "gates": [GateSettings...], "device"}``; the worker
writes ``{"results": [Result...], "torch": {...}}`` to RESULT, and progress lines
``{"gate", "step", "loss"}`` to the file descriptor FD when given.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from mlsmoke.errors import EXIT_INTERRUPTED
from mlsmoke.overfit.process.imports import project_modules
from mlsmoke.overfit.process.settings import GateSettings

PROGRESS_INTERVAL = 0.1  # seconds between progress lines


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    request = json.loads(Path(args[0]).read_text())
    progress = os.fdopen(int(args[2]), "w", buffering=1) if len(args) > 2 else None
    _enter_project(Path(request["root"]))
    try:
        from mlsmoke.overfit.gate import run_gate

        results = []
        for data in request["gates"]:
            settings = GateSettings.from_json(data)
            on_step = _progress_writer(progress, settings) if progress else None
            result, _ = run_gate(settings, request.get("device"), on_step)
            result.sources = project_modules(Path(request["root"]))
            results.append(result.to_json())
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        if progress is not None:
            progress.close()
    _write_atomically(Path(args[1]), {"results": results, "torch": torch_stamp()})
    return 0


def _enter_project(root: Path) -> None:
    """Make the project's code importable the way its own scripts see it."""
    os.chdir(root)
    for directory in (root / "src", root):
        if directory.is_dir() and str(directory) not in sys.path:
            sys.path.insert(0, str(directory))


def _progress_writer(stream: IO[str], settings: GateSettings):
    last = [0.0]

    def on_step(step: int, loss: float) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL or step == 0:
            last[0] = now
            line = {"gate": settings.name, "step": step, "loss": loss}
            try:
                stream.write(json.dumps(line) + "\n")
            except OSError:  # the hook stopped reading; training goes on
                pass

    return on_step


def torch_stamp() -> dict[str, Any]:
    """torch's version and the stat of its dist-info METADATA, which the hook checks
    (without starting this interpreter) to trust a cached pass."""
    import importlib.metadata

    import torch

    stamp: dict[str, Any] = {"version": torch.__version__, "python": sys.executable}
    try:
        distribution = importlib.metadata.distribution("torch")
        metadata = Path(getattr(distribution, "_path")) / "METADATA"
        stat = metadata.stat()
    except (importlib.metadata.PackageNotFoundError, AttributeError, OSError):
        return stamp
    stamp.update(
        metadata=str(metadata.resolve()),
        mtime_ns=stat.st_mtime_ns,
        size=stat.st_size,
        inode=stat.st_ino,
    )
    return stamp


def _write_atomically(path: Path, data: dict[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)


if __name__ == "__main__":
    raise SystemExit(main())
