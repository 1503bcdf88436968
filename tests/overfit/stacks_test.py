"""Where a stopped gate was: its phase and the user's frames, read from stacks."""

from __future__ import annotations

import faulthandler
import tempfile
import threading
from pathlib import Path

import mlsmoke
from mlsmoke.overfit.process.stacks import (
    Frame,
    main_thread_frames,
    phase_of,
    user_frames,
)
from mlsmoke.scratch import remove_stale, scratch_directory
from mlsmoke.watchdog import Watchdog

PACKAGE = str(Path(mlsmoke.__file__).resolve().parent)
WORKER = Frame(f"{PACKAGE}/overfit/process/worker.py", 40, "main")
GATE = Frame(f"{PACKAGE}/overfit/gate.py", 90, "run_gate")
TRAIN = Frame(f"{PACKAGE}/overfit/training/engine.py", 120, "_train")
MODEL = Frame(f"{PACKAGE}/overfit/training/setup.py", 30, "build_model")
BATCH = Frame(f"{PACKAGE}/overfit/training/setup.py", 60, "build_batch")
PROBE = Frame(f"{PACKAGE}/overfit/verdict/probes.py", 50, "at_lr")
SCRIPT = Frame(f"{PACKAGE}/overfit/training/script_run.py", 94, "run_script")
USER = Frame("/home/me/project/models.py", 12, "forward")
LIBRARY = Frame("/usr/lib/python3.11/threading.py", 320, "wait")
TORCH = Frame("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1, "f")


def test_the_innermost_of_the_gates_functions_names_the_phase() -> None:
    assert phase_of([WORKER, GATE, TRAIN, MODEL, USER]) == "model"
    assert phase_of([WORKER, GATE, TRAIN, BATCH, USER, LIBRARY]) == "batch"
    assert phase_of([WORKER, GATE, TRAIN, TORCH, USER]) == "training"
    assert phase_of([WORKER, GATE, PROBE, TRAIN, USER]) == "probing"
    assert phase_of([WORKER, GATE, PROBE, TRAIN, MODEL, USER]) == "model"
    assert phase_of([WORKER]) == "starting"
    assert phase_of([WORKER, GATE, SCRIPT, USER, TORCH]) == "script"
    assert phase_of([WORKER, GATE, PROBE, SCRIPT, USER]) == "probing"


def test_user_frames_leave_out_mlsmoke_the_standard_library_and_torch() -> None:
    frames = [WORKER, GATE, TRAIN, TORCH, USER, LIBRARY, Frame("<string>", 1, "x")]
    assert user_frames(frames) == [USER]


def test_the_main_threads_stack_is_read_from_a_faulthandler_dump() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # frames of threading.py
    other.start()
    with tempfile.TemporaryFile("w+") as dump:
        faulthandler.dump_traceback(dump, all_threads=True)
        dump.seek(0)
        text = dump.read()
    stop.set()
    assert text.lower().count("thread 0x") >= 2
    frames = main_thread_frames(text, "stacks_test.py")
    assert frames[-1].function == (
        "test_the_main_threads_stack_is_read_from_a_faulthandler_dump"
    )
    assert frames[0].line > 0 and frames[-1].file.endswith("stacks_test.py")


def test_the_watchdog_kills_at_the_deadline_it_was_last_given() -> None:
    killed = threading.Event()
    watchdog = Watchdog(killed.set, 0.2)
    watchdog.start()
    watchdog.extend(5.0)  # a gate started: its own time
    assert not killed.wait(0.5)
    watchdog.extend(0.1)
    assert killed.wait(2.0) and watchdog.expired_after == 0.1
    finished = Watchdog(killed.clear, 0.2)
    finished.start()
    finished.finish()
    finished.join(1)
    assert killed.is_set() and finished.expired_after is None


def test_scratch_directories_of_dead_processes_are_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with scratch_directory("overfit") as mine:
        name = Path(mine).name
        dead = tmp_path / name.replace(f"-{__import__('os').getpid()}-", "-999999999-")
        dead.mkdir()
        unrelated = tmp_path / "mlsmoke-notes"
        unrelated.mkdir()
        remove_stale()
        assert Path(mine).is_dir() and unrelated.is_dir() and not dead.exists()
