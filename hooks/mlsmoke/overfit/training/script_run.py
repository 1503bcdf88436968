"""Script mode's runner: the project's training script, run as ``python train.py ARGS``
runs it, pinned to one batch, with a few points instrumented (``script_points.py``).

The script runs in this process, as ``__main__``, from the project root, as
``script_process.py`` sets a process up for it (its argv, one process). It
ends at an optimizer step: at the target, at ``max-steps``, frozen in place, or out of
time; or on its own. What it did is an :class:`Evidence`, as a factory run's is.
Errors before its first optimizer is built are the configuration's
(``ScriptNotRunnable``, naming the key); after, they are the project's, recorded for the
diagnoses.
"""

from __future__ import annotations

import ast
import builtins
import math
import random
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.training import instruments, script_pin
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.engine import accept_eval_loss, settle_confirmed_pass
from mlsmoke.overfit.training.evidence import PHASES, Evidence
from mlsmoke.overfit.training.observers import working_directory
from mlsmoke.overfit.training.script_frames import innermost_project_line
from mlsmoke.overfit.training.script_globals import give_globals
from mlsmoke.overfit.training.script_gradients import never_got_gradient
from mlsmoke.overfit.training.script_lr import lr_origin
from mlsmoke.overfit.training.script_points import (
    ScriptStopped,
    ScriptWatch,
    StepRules,
    instrumented,
)
from mlsmoke.overfit.training.script_process import Script, as_a_process
from mlsmoke.overfit.training.script_trainers import trainers_run_for
from mlsmoke.overfit.training.script_writes import recording_writes


class ScriptNotRunnable(Exception):
    """The script cannot be gated as configured; ``key`` is the config key to fix."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass
class ScriptOutcome:
    """One run's evidence, and what the probes and checks reuse of it."""

    evidence: Evidence
    watch: ScriptWatch
    pin: script_pin.PinnedBatch


# What one rank adds to the run's instruments (``ranks/script_rank.py``).
RankPoints = Callable[[ScriptWatch, script_pin.PinnedBatch], AbstractContextManager]


def run_script(
    script: Script, rules: StepRules, seed: int, rank_points: RankPoints | None = None
) -> ScriptOutcome:
    """Run ``script`` under ``rules``; ScriptNotRunnable for a configuration that
    cannot run."""
    evidence = Evidence(max_steps=rules.max_steps, script=script.path)
    watch = ScriptWatch(evidence, rules, script.root, script.file)
    pin = script_pin.PinnedBatch()
    watch.on_first_step = pin.lock
    code = _compile(script)
    namespace = {
        "__name__": "__main__",
        "__file__": str(script.file),
        "__builtins__": builtins,
        script_pin.PIN_HOOK: lambda function: script_pin.pinned(function, pin),
    }
    with ExitStack() as undo:
        undo.enter_context(recording_writes(script.root, evidence.project_writes))
        stderr = undo.enter_context(as_a_process(script))
        undo.enter_context(deterministic(seed))
        undo.enter_context(instrumented(watch))
        # the gate's steps, the last one's eval-mode update and one to spare
        undo.enter_context(trainers_run_for(rules.max_steps + 2, evidence))
        if rank_points is not None:
            undo.enter_context(rank_points(watch, pin))
        undo.callback(_offset_seeds(seed))
        undo.callback(_pin_batches(script, pin))
        try:
            exec(code, namespace)
            evidence.script_ended = True
        except ScriptStopped:
            pass
        except (Exception, SystemExit) as error:
            _record_error(script, watch, pin, error, stderr.getvalue())
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
    missing = give_globals(tree, script.globals)
    if missing:
        raise ScriptNotRunnable(
            f"globals.{missing[0]}",
            f"{script.path} has no module-level assignment `{missing[0]} = ...`"
            " whose value the gate could give",
        )
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


def _record_error(
    script: Script,
    watch: ScriptWatch,
    pin: script_pin.PinnedBatch,
    error: BaseException,
    stderr: str,
) -> None:
    if watch.optimizer is None:
        raise _not_runnable(script, error, stderr) from None
    evidence = watch.evidence
    if isinstance(error, SystemExit) and watch.stepped:
        evidence.script_ended = True  # as at its own last iteration
        return
    evidence.error = error
    if pin.raised(error):
        evidence.phase = "batch"
    else:
        evidence.phase = watch.phase if watch.phase in PHASES else "forward"
    evidence.user_traceback = instruments.user_traceback(error)
    evidence.working_directory = working_directory()


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
    del evidence.lrs[max(len(evidence.losses) - 1, 0) :]  # an lr per update taken
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
    if watch.eval_loss is not None and not watch.evidence.reached:
        accept_eval_loss(watch.evidence, watch.eval_loss)
