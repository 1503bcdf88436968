"""The gate's entry point inside the project's interpreter.

Run by the hook through :func:`mlsmoke.project_command.module_command`::

    python -c <bootstrap> <mlsmoke package> <hook pid> mlsmoke.overfit.process.worker \
        REQUEST RESULT [FD]

The bootstrap calls :func:`main` with those arguments; the project's code sees
``sys.argv == ["-c"]``.

REQUEST is a JSON file ``{"root", "gates": [GateSettings...], "device", "stack"}``;
the worker writes ``{"results": [Result...], "torch": {...}}`` to RESULT after each
gate, and to the file descriptor FD when given, a line ``{"gate", "start": timeout}``
as each gate starts and progress lines ``{"gate", "step", "loss"}``.

Each gate has ``timeout`` seconds, factories and probes included: its probes get what
is left. Just past it, faulthandler writes every thread's stack to the file STACK, which
the hook reads after killing this process; so it does when this process crashes.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from mlsmoke.errors import EXIT_INTERRUPTED
from mlsmoke.overfit.process import stacks
from mlsmoke.overfit.process.imports import project_modules
from mlsmoke.overfit.process.settings import GateSettings

PROGRESS_INTERVAL = 0.1  # seconds between progress lines
STACK_DUMP_DELAY = 1.0  # past the timeout; the hook kills the worker a little later

# Set by a real SIGINT: a KeyboardInterrupt the project's code raises is its error.
_sigint = threading.Event()


def _on_sigint(signum: int, frame: object) -> None:
    _sigint.set()
    raise KeyboardInterrupt


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    request = json.loads(Path(args[0]).read_text())
    progress = os.fdopen(int(args[2]), "w", buffering=1) if len(args) > 2 else None
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    enter_project(Path(request["root"]))
    stack = open(request["stack"], "w") if request.get("stack") else None
    if stack is not None:  # a crash (SIGSEGV) writes where it happened, as a timeout
        faulthandler.enable(file=stack, all_threads=True)
    try:
        import mlsmoke.overfit.gate  # noqa: F401  (before any gate's clock starts)

        results: list[dict[str, Any]] = []
        for data in request["gates"]:
            settings = GateSettings.from_json(data)
            _send(progress, {"gate": settings.name, "start": settings.timeout})
            on_step = _progress_writer(progress, settings) if progress else None
            if stack is not None:
                faulthandler.dump_traceback_later(
                    settings.timeout + STACK_DUMP_DELAY, file=stack
                )
            deadline = time.monotonic() + settings.timeout
            try:
                scratch = Path(args[1]).parent  # the hook's, removed by the hook
                result = _run(
                    settings, request.get("device"), on_step, deadline, scratch
                )
                result.sources = project_modules(Path(request["root"]))
                if settings.script and settings.script not in result.sources:
                    result.sources.append(settings.script)  # run, never imported
                results.append(result.to_json())
            except KeyboardInterrupt as error:
                if _sigint.is_set():
                    raise
                results.append(_raised_interrupt(settings, error))
            finally:
                faulthandler.cancel_dump_traceback_later()
            _write_atomically(
                Path(args[1]), {"results": results, "torch": torch_stamp()}
            )
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        for stream in (progress, stack):
            if stream is not None:
                stream.close()
    return 0


def _run(
    settings: GateSettings, device: str | None, on_step, deadline: float, scratch: Path
):
    """One gate's Result: in this process, or in ``world-size`` ranks."""
    if settings.world_size > 1:
        from mlsmoke.overfit.process.ranks import run_ranks

        return run_ranks(settings, device, on_step, deadline, scratch_in=scratch)
    from mlsmoke.overfit.gate import run_gate

    return run_gate(settings, device, on_step, deadline=deadline)[0]


def _raised_interrupt(settings: GateSettings, error: KeyboardInterrupt) -> dict:
    """The gate's failure when the project's code raised KeyboardInterrupt itself."""
    from mlsmoke.overfit.training.instruments import user_traceback
    from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis, Result

    doing = stacks.DOING[stacks.phase_of(stacks.traceback_frames(error.__traceback__))]
    evidence = ["no SIGINT reached the gate: this is the project's exception, not"
                " an interrupt"]  # fmt: skip
    evidence += [text for text in [user_traceback(error)] if text]
    summary = f"{doing} raised KeyboardInterrupt"
    return Result(settings.name, Diagnosis(TRAIN_ERROR, summary, evidence)).to_json()


def _send(stream: IO[str] | None, event: dict[str, Any]) -> None:
    if stream is None:
        return
    try:
        stream.write(json.dumps(event) + "\n")
    except OSError:  # the hook stopped reading; training goes on
        pass


def enter_project(root: Path) -> None:
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
            _send(stream, {"gate": settings.name, "step": step, "loss": loss})

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
