"""Script mode's runner: the project's training script, run as ``python train.py ARGS``
runs it, pinned to one batch, with a few points instrumented (``script_points.py``).

The script runs in this process, as ``__main__``, from the project root, with
``sys.argv`` set to its arguments and the torchrun variables unset (one process). It
ends at an optimizer step: at the target, at ``max-steps``, frozen in place, or out of
time; or on its own. What it did is an :class:`Evidence`, as a factory run's is.
Errors before its first optimizer is built are the configuration's
(``ScriptNotRunnable``, naming the key); after, they are the project's, recorded for the
diagnoses.
"""

from __future__ import annotations

import ast
import builtins
import io
import math
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch

from mlsmoke.overfit.training import instruments, script_pin
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.engine import settle_confirmed_pass
from mlsmoke.overfit.training.evidence import PHASES, Evidence
from mlsmoke.overfit.training.script_points import (
    ScriptStopped,
    ScriptWatch,
    StepRules,
    innermost_project_line,
    instrumented,
    never_got_gradient,
)
from mlsmoke.overfit.training.script_lr import lr_origin

# One process, as `python train.py` runs: a script written for torchrun takes its
# distributed branch as soon as RANK is set.
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                      "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")  # fmt: skip
OUT_DIR = "{out_dir}"  # replaced in args by a directory the gate provides
STDERR_TAIL = 2000  # characters of the script's stderr kept for a message


class ScriptNotRunnable(Exception):
    """The script cannot be gated as configured; ``key`` is the config key to fix."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass
class Script:
    """What ``script``, ``args`` and ``pin`` name, in the project at ``root``."""

    root: Path
    path: str
    args: list[str] = field(default_factory=list)
    pin: str | None = None

    @property
    def file(self) -> Path:
        return self.root / self.path

    @property
    def module_name(self) -> str:
        return Path(self.path).with_suffix("").as_posix().replace("/", ".")

    def command(self) -> str:
        return " ".join(["python", self.path, *self.args])


@dataclass
class ScriptOutcome:
    """One run's evidence, and what the probes and checks reuse of it."""

    evidence: Evidence
    watch: ScriptWatch
    pin: script_pin.PinnedBatch


def run_script(script: Script, rules: StepRules, seed: int) -> ScriptOutcome:
    """Run ``script`` under ``rules``; ScriptNotRunnable for a configuration that
    cannot run."""
    evidence = Evidence(max_steps=rules.max_steps, script=script.path)
    watch = ScriptWatch(evidence, rules, script.root, script.file)
    pin = script_pin.PinnedBatch()
    code = _compile(script)
    namespace = {
        "__name__": "__main__",
        "__file__": str(script.file),
        "__builtins__": builtins,
        script_pin.PIN_HOOK: lambda function: script_pin.pinned(function, pin),
    }
    with as_a_process(script) as stderr, deterministic(seed), instrumented(watch):
        undo_seeds = _offset_seeds(seed)
        undo_pin = _pin_batches(script, pin)
        try:
            exec(code, namespace)
        except ScriptStopped:
            pass
        except (Exception, SystemExit) as error:
            _record_error(script, watch, error, stderr.getvalue())
        finally:
            undo_pin()
            undo_seeds()
    _conclude(script, watch, pin)
    return ScriptOutcome(evidence, watch, pin)


def _offset_seeds(seed: int) -> Callable[[], None]:
    """Add the gate's ``seed`` to every seed the script sets (torch, random, numpy),
    so that the gate's seeds vary a script that seeds itself; returns the undo."""
    if seed == 0:
        return lambda: None
    targets: list[tuple[Any, str]] = [(torch, "manual_seed"), (random, "seed")]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        targets.append((numpy.random, "seed"))
    originals = [(owner, name, getattr(owner, name)) for owner, name in targets]
    for owner, name, original in originals:
        setattr(owner, name, _offset(original, seed))

    def undo() -> None:
        for owner, name, original in originals:
            setattr(owner, name, original)

    return undo


def _offset(original: Callable[..., Any], seed: int) -> Callable[..., Any]:
    def seeded(value: Any = None, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value + seed) % 2**32
        return original(value, *args, **kwargs)

    return seeded


def _compile(script: Script) -> Any:
    try:
        source = script.file.read_bytes()
        tree = ast.parse(source, filename=str(script.file))
    except (OSError, SyntaxError, ValueError) as error:
        raise ScriptNotRunnable("script", f"{script.path}: cannot be read: {error}")
    module, _, function = (script.pin or "").partition(":")
    if script.pin and module == script.module_name:
        if not script_pin.rewrite_script(tree, function):
            raise ScriptNotRunnable(
                "pin", f"{script.path} defines no function {function!r}"
            )
    return compile(tree, str(script.file), "exec")


def _pin_batches(script: Script, pin: script_pin.PinnedBatch) -> Any:
    module, _, _ = (script.pin or "").partition(":")
    if not script.pin:
        return script_pin.pin_first_loader(pin)
    if module == script.module_name:
        return lambda: None
    try:
        return script_pin.pin_module_function(script.pin, pin)
    except script_pin.PinNotFound as error:
        raise ScriptNotRunnable("pin", str(error)) from None


@contextmanager
def as_a_process(script: Script) -> Iterator[io.StringIO]:
    """``sys.argv``, ``sys.path[0]``, the environment and stderr as ``python
    SCRIPT ARGS`` would have them; the script's stderr is also kept, for messages."""
    out_dir = tempfile.mkdtemp(prefix="mlsmoke-script-")
    args = [arg.replace(OUT_DIR, out_dir) for arg in script.args]
    saved_argv, saved_path, saved_stderr = sys.argv, list(sys.path), sys.stderr
    saved_env = {name: os.environ.pop(name) for name in TORCHRUN_VARIABLES
                 if name in os.environ}  # fmt: skip
    tail = io.StringIO()
    sys.argv = [str(script.file), *args]
    sys.path.insert(0, str(script.file.parent))
    sys.stderr = _Tee(saved_stderr, tail)  # type: ignore[assignment]
    os.environ["MLSMOKE_OUT_DIR"] = out_dir
    try:
        yield tail
    finally:
        sys.argv, sys.path[:], sys.stderr = saved_argv, saved_path, saved_stderr
        os.environ.pop("MLSMOKE_OUT_DIR", None)
        os.environ.update(saved_env)
        shutil.rmtree(out_dir, ignore_errors=True)


class _Tee(io.TextIOBase):
    def __init__(self, stream: TextIO, tail: io.StringIO) -> None:
        self.stream, self.tail = stream, tail

    def write(self, text: str) -> int:
        self.tail.write(text)
        if self.tail.tell() > 4 * STDERR_TAIL:
            kept = self.tail.getvalue()[-STDERR_TAIL:]
            self.tail.seek(0)
            self.tail.truncate()
            self.tail.write(kept)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


def _record_error(
    script: Script, watch: ScriptWatch, error: BaseException, stderr: str
) -> None:
    if watch.optimizer is None:
        raise _not_runnable(script, error, stderr) from None
    evidence = watch.evidence
    if isinstance(error, SystemExit) and watch.stepped:
        return  # the script ended itself, as at its own last iteration
    evidence.error = error
    evidence.phase = watch.phase if watch.phase in PHASES else "forward"
    evidence.user_traceback = instruments.user_traceback(error)


def _not_runnable(script: Script, error: BaseException, stderr: str) -> Exception:
    """Why the script stopped before it built an optimizer, in its own words."""
    ran = f"`{script.command()}`"
    if isinstance(error, SystemExit):
        status = error.code if error.code is not None else 0
        said = _last_lines(stderr) or (str(status) if isinstance(status, str) else "")
        key = "args" if script.args and status == 2 else "script"
        message = f"{ran} exited with status {status} before building an optimizer"
        return ScriptNotRunnable(key, f"{message}: {said}" if said else message)
    line = innermost_project_line(script.root, error)
    where = f" at {line}" if line else ""
    return ScriptNotRunnable(
        "script",
        f"{ran} raised {type(error).__name__}: {error}{where}, before building an"
        " optimizer",
    )


def _last_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:])


def _conclude(script: Script, watch: ScriptWatch, pin: script_pin.PinnedBatch) -> None:
    """The evidence as a factory run's reads: the recipe, the eval-mode verdict, the
    parameters no update reached; ScriptNotRunnable for a script that never trained."""
    evidence = watch.evidence
    evidence.seconds = time.perf_counter() - watch.started
    if watch.optimizer is None:
        raise ScriptNotRunnable(
            "script",
            f"`{script.command()}` ran to its end without building a torch.optim"
            " optimizer; script mode gates the script that trains",
        )
    if not watch.stepped and evidence.error is None:
        raise ScriptNotRunnable(
            "script",
            f"`{script.command()}` built {evidence.optimizer} at"
            f" {watch.optimizer_site or script.path} but ended before its first"
            " optimizer.step(); do the args stop it early (max_iters, epochs)?",
        )
    evidence.pinned = pin.source
    evidence.backwards_per_update = max(watch.backwards_per_update, 1)
    _record_recipe(script, watch)
    if evidence.error is None:
        evidence.never_got_gradient = never_got_gradient(watch)
        _judge_in_eval_mode(watch)
    if evidence.losses and not math.isfinite(evidence.losses[-1]):
        evidence.error = None  # a non-finite loss is evidence, not an error
    settle_confirmed_pass(evidence)


def _record_recipe(script: Script, watch: ScriptWatch) -> None:
    evidence = watch.evidence
    constructed = (watch.constructed_lr or 0.0) * watch.rules.lr_scale
    evidence.lr_scale = watch.rules.lr_scale
    evidence.lr = evidence.lrs[0] if evidence.lrs else constructed
    if any(not math.isclose(lr, constructed) for lr in evidence.lrs):
        evidence.scheduler = f"the schedule in {script.path}"
        evidence.unscheduled_lr = constructed
    evidence.optimizer_source = (
        lr_origin(script, watch.constructed_lr or 0.0) or watch.optimizer_site
    )


def _judge_in_eval_mode(watch: ScriptWatch) -> None:
    """A train-mode loss that stopped short is memorization when the eval-mode loss
    of the same batch reached the target."""
    evidence = watch.evidence
    if watch.eval_loss is None or evidence.reached or evidence.target is None:
        return
    evidence.eval_loss = watch.eval_loss
    if watch.eval_loss <= evidence.target:
        evidence.reached = True
        evidence.reached_at = evidence.steps
