"""Run gates in the project's interpreter and read their results back.

The worker's own output (the project's prints, torch's warnings) is captured and shown
with ``-v`` or when the worker dies. Progress comes through a pipe of its own and is
drawn as one live line, on a terminal only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from mlsmoke.errors import EnvironmentProblem
from mlsmoke.interpreter import module_command
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.report import progress_line
from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis, Result

# Probes of a failing gate take a few times its own run; beyond this, the worker hangs.
HANG_FACTOR, HANG_GRACE = 6, 120.0
OUTPUT_TAIL = 40  # lines of the worker's output shown when it dies


def run_worker(
    root: Path,
    python: Path,
    gates: list[GateSettings],
    device: str | None,
    verbose: bool,
) -> tuple[list[Result], dict[str, Any]]:
    """The gates' Results, and the torch stamp of ``python`` (empty if it died)."""
    with tempfile.TemporaryDirectory(prefix="mlsmoke-overfit-") as scratch:
        request, answer = Path(scratch, "request.json"), Path(scratch, "result.json")
        request.write_text(
            json.dumps(
                {
                    "root": str(root),
                    "gates": [gate.to_json() for gate in gates],
                    "device": device,
                }
            )
        )
        output = Path(scratch, "output.txt")
        code = _spawn(root, python, gates, [str(request), str(answer)], output)
        captured = output.read_text(errors="replace")
        if verbose and captured:
            sys.stderr.write(captured)
        if code == 130:
            raise KeyboardInterrupt
        try:
            data = json.loads(answer.read_text())
            return [Result.from_json(item) for item in data["results"]], data["torch"]
        except (OSError, ValueError, KeyError, TypeError):
            return [_died(gate, python, code, captured) for gate in gates], {}


def _spawn(
    root: Path, python: Path, gates: list[GateSettings], args: list[str], output: Path
) -> int:
    read_end, write_end = os.pipe()
    command = module_command(
        python, "mlsmoke.overfit.process.worker", *args, str(write_end)
    )
    deadline = sum(gate.timeout for gate in gates) * HANG_FACTOR + HANG_GRACE
    with output.open("wb") as sink:
        try:
            process = subprocess.Popen(
                command,
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
            )
        except OSError as error:
            os.close(read_end)
            raise EnvironmentProblem(
                f"{python}: cannot run: {error.strerror}"
            ) from None
        finally:
            os.close(write_end)
        progress = _ProgressDrawer(os.fdopen(read_end), gates)
        progress.start()
        # A timer kills a hung worker: Popen.wait(timeout=...) polls with sleeps of up
        # to 50 ms, which every gate run would pay after the worker exits.
        hung = threading.Event()
        watchdog = threading.Timer(deadline, lambda: (hung.set(), process.kill()))
        watchdog.daemon = True
        watchdog.start()
        try:
            code = process.wait()
        except KeyboardInterrupt:
            process.terminate()
            process.wait()
            raise
        finally:
            watchdog.cancel()
            progress.join(timeout=1)
        if hung.is_set():
            sink.write(f"\nkilled after {deadline:.0f} s\n".encode())
            return -9
        return code


class _ProgressDrawer(threading.Thread):
    """Reads the worker's progress lines; draws them when stderr is a terminal."""

    def __init__(self, stream: IO[str], gates: list[GateSettings]) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.max_steps = {gate.name: gate.max_steps for gate in gates}
        self.live = sys.stderr.isatty()

    def run(self) -> None:
        started: dict[str, float] = {}
        drawn = False
        with self.stream:
            for line in self.stream:
                if not self.live:
                    continue
                try:
                    event = json.loads(line)
                    gate, step, loss = event["gate"], event["step"], event["loss"]
                except (ValueError, KeyError, TypeError):
                    continue
                now = time.monotonic()
                started.setdefault(gate, now)
                rate = step / (now - started[gate]) if now > started[gate] else 0.0
                text = progress_line(
                    gate, step, self.max_steps.get(gate, 0), loss, rate
                )
                sys.stderr.write(f"\r\033[K{text}")
                sys.stderr.flush()
                drawn = True
        if drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _died(gate: GateSettings, python: Path, code: int, output: str) -> Result:
    tail = "\n".join(output.rstrip().splitlines()[-OUTPUT_TAIL:])
    summary = f"{python} exited with code {code} before the gate finished"
    return Result(gate.name, Diagnosis(TRAIN_ERROR, summary, [tail] if tail else []))
