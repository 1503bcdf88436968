"""Run the real ``mlsmoke`` CLI in a real subprocess, inject a fault, and look for
what it leaves behind.

Shared by the fault-injection tests (``tests/faults/``) and the reliability benchmark
(``benchmarks/bench_reliability.py``); standard library only, no pytest.

Every process started here carries ``MLSMOKE_FAULT_TAG=<tag>`` in its environment,
inherited by the hook's worker and anything the project's code starts, so the process
table tells which of them are still running after the CLI exited, orphans included.
Temporary files go to a ``TMPDIR`` of the run's own, so leftovers are exactly the
``mlsmoke-*`` entries in it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mlsmoke

PACKAGE = str(Path(mlsmoke.__file__).resolve().parent) + os.sep
TAG_VARIABLE = "MLSMOKE_FAULT_TAG"
MARKER_VARIABLE = "MLSMOKE_FAULT_MARKER"
# A process just killed needs a moment to leave the process table.
SETTLE_SECONDS = 3.0

# Factories for throwaway projects. ``reached(name)`` writes a marker file, so a test
# can wait for the fault to be under way before it signals.
FACTORIES = textwrap.dedent('''
    import os
    import signal
    import sys
    import threading
    import time

    import torch


    def reached(name):
        marker = os.environ.get("MLSMOKE_FAULT_MARKER")
        if marker:
            with open(marker, "a") as file:
                file.write(name + "\\n")


    def hang():
        threading.Event().wait()  # a deadlock: waits for a lock nobody releases


    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.layer(x)


    class SlowForward(Tiny):
        def forward(self, x):
            reached("forward")
            time.sleep(3600)
            return self.layer(x)


    class HangsInTraining(Tiny):
        """Fast for the first forward, then one that never returns."""

        calls = 0

        def forward(self, x):
            HangsInTraining.calls += 1
            if HangsInTraining.calls > 3:
                reached("training")
                hang()
            return self.layer(x)


    class HangsWhenProbed(Tiny):
        """The first instance to run forward trains as usual (the gate's own run);
        any other hangs there (the probes' runs)."""

        built = 0
        trained = []

        def __init__(self):
            super().__init__()
            HangsWhenProbed.built += 1
            self.serial = HangsWhenProbed.built

        def forward(self, x):
            if not HangsWhenProbed.trained:
                HangsWhenProbed.trained.append(self.serial)
            if HangsWhenProbed.trained[0] != self.serial:
                reached("probing")
                hang()
            return self.layer(x)


    class CrashesInForward(Tiny):
        def forward(self, x):
            os.kill(os.getpid(), signal.SIGSEGV)  # as a crash in native code would
            return self.layer(x)


    def model():
        return Tiny()


    def crashing_model():
        return CrashesInForward()


    def hangs_when_probed_model():
        return HangsWhenProbed()


    def hung_model():
        reached("model")
        hang()


    def slow_forward_model():
        return SlowForward()


    def hangs_in_training_model():
        HangsInTraining.calls = 0
        return HangsInTraining()


    def interrupting_model():
        raise KeyboardInterrupt


    def spawning_model():
        """Starts a child process and forgets it (a data server, a tensorboard)."""
        import subprocess

        subprocess.Popen(["sleep", "300"])
        return Tiny()


    def spawning_hung_model():
        import subprocess

        subprocess.Popen(["sleep", "300"])
        reached("model")
        hang()


    def forking_model():
        if os.fork() == 0:
            time.sleep(300)
            os._exit(0)
        return Tiny()


    def daemon_model():
        """A daemon: forked twice, in a session of its own, so out of the worker's
        process group."""
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
        os.wait()
        return Tiny()


    def huge_model():
        return torch.nn.Linear(10**6, 10**6)


    def hogging_model():
        reached("model")
        hog = bytearray(50 * 2**20)  # noqa: F841 - memory the OOM report must show
        hang()


    def batch():
        generator = torch.Generator().manual_seed(0)
        return torch.randn(8, 4, generator=generator), torch.arange(8) % 3


    def hung_batch():
        reached("batch")
        hang()


    def loss(model, batch):
        inputs, labels = batch
        return torch.nn.functional.cross_entropy(model(inputs), labels)


    # Losses for a gate on ranks (world-size = 2): rank 1 meets the fault, rank 0 is
    # left waiting in the next collective.
    def rank_one_exits(model, batch):
        if torch.distributed.get_rank() == 1:
            reached("rank")
            os._exit(3)
        return loss(model, batch)


    def rank_one_is_killed(model, batch):
        if torch.distributed.get_rank() == 1:
            reached("rank")
            os.kill(os.getpid(), 9)
        return loss(model, batch)


    def rank_one_raises(model, batch):
        if torch.distributed.get_rank() == 1:
            reached("rank")
            raise ValueError("rank 1's shard is broken")
        return loss(model, batch)


    def rank_one_hangs(model, batch):
        if torch.distributed.get_rank() == 1:
            reached("rank")
            time.sleep(3600)
        return loss(model, batch)
    ''')


def write_project(root: Path, overfit: Mapping[str, object] | None = None) -> Path:
    """A project at ``root`` with ``fault_factories.py`` and one overfit gate,
    ``smoke``, whose keys default to a tiny model that memorizes its batch."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "fault_factories.py").write_text(FACTORIES)
    keys = {
        "model": "fault_factories:model",
        "batch": "fault_factories:batch",
        "loss": "fault_factories:loss",
        "lr": 0.5,
        "timeout": 3,
        **(overfit or {}),
    }
    table = "\n".join(f"{key} = {_toml(value)}" for key, value in keys.items())
    (root / "pyproject.toml").write_text(
        '[project]\nname = "faults"\n\n'
        f'[tool.mlsmoke]\npython = "{sys.executable}"\n\n'
        f"[tool.mlsmoke.overfit.smoke]\n{table}\n"
    )
    return root


def _toml(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


@dataclass
class Outcome:
    """One run of the CLI: what it said, how it ended, and what it left behind."""

    code: int
    stdout: str
    stderr: str
    seconds: float  # from the start, or from the signal when one was sent
    processes: list[str] = field(default_factory=list)  # still running: "pid cmd"
    files: list[str] = field(default_factory=list)  # mlsmoke-* left in TMPDIR
    workers: list[int] = field(default_factory=list)  # warm workers, still running

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def problems(self) -> list[str]:
        """What no fault may cause: a traceback from mlsmoke, a leftover process or
        a leftover temporary file."""
        found = []
        if any(name.startswith(PACKAGE) for name in _traceback_files(self.stderr)):
            found.append(f"an mlsmoke traceback:\n{self.stderr}")
        if "Exception ignored" in self.stderr:
            found.append(f"an ignored exception:\n{self.stderr}")
        if self.processes:
            found.append(f"processes left running: {self.processes}")
        if self.files:
            found.append(f"temporary files left: {self.files}")
        return found


def _traceback_files(text: str) -> list[str]:
    """The file names of the traceback frames in ``text``."""
    return [
        str(Path(line.split('"')[1]).resolve())
        for line in text.splitlines()
        if line.lstrip().startswith('File "')
    ]


@dataclass
class Fault:
    """When and how to hit the running CLI: after ``marker`` names ``reached``
    (or after ``delay`` seconds), send ``signum`` to the CLI (``target="cli"``), to
    its process group (``"group"``, what a terminal's Ctrl-C does) or to the worker
    (``"worker"``: the process running the gate, forked or not) or to the warm worker
    (``"warm"``). Signal 0 sends nothing: the outcome's time starts there."""

    signum: int
    reached: str | None = None
    delay: float = 0.0
    target: str = "cli"


def run_cli(
    args: Sequence[str],
    cwd: Path,
    scratch: Path,
    *,
    fault: Fault | None = None,
    limit: float = 60.0,
    close_stdout: bool = False,
    env: Mapping[str, str] | None = None,
    tag: str | None = None,
    settle_seconds: float = SETTLE_SECONDS,
) -> Outcome:
    """Run ``mlsmoke ARGS`` in ``cwd``; ``scratch`` holds its TMPDIR and marker.

    ``tag`` defaults to a new one; runs that should share a warm worker share a tag
    (the worker's key holds the environment). A warm worker is not a leftover: the
    outcome lists those carrying the tag in ``workers``, still running.

    ``limit`` is the test's own patience: past it the CLI is killed and the outcome
    says so (code -9). ``close_stdout`` closes the read end of stdout at once, as
    ``mlsmoke ... | head -0`` would. Processes it left are killed after
    ``settle_seconds`` (``worker start`` leaves one by design, until its worker is up).
    """
    tag = tag or uuid.uuid4().hex
    tmpdir, marker = scratch / "tmp", scratch / "marker"
    tmpdir.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    # As users run it: with a buffered stdout, whatever this test run was given.
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    environment = {
        **inherited,
        "TMPDIR": str(tmpdir),
        TAG_VARIABLE: tag,
        MARKER_VARIABLE: str(marker),
        **(env or {}),
    }
    command = [sys.executable, "-m", "mlsmoke", *args]
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, like a job in a shell
    )
    if close_stdout:
        process.stdout.close()
    if fault is not None:
        start = _inject(process, fault, marker, tag, start + limit)
    try:
        stdout, stderr = _communicate(process, close_stdout, start + limit)
    finally:
        seconds = time.monotonic() - start
    return Outcome(
        process.returncode,
        stdout,
        stderr,
        seconds,
        settle(tag, exclude=(), limit=settle_seconds),
        leftover_files(tmpdir),
        sorted(warm_workers(tag)),
    )


def _communicate(
    process: subprocess.Popen, stdout_closed: bool, deadline: float
) -> tuple[str, str]:
    if stdout_closed:
        process.stdout = None
    try:
        out, err = process.communicate(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        err = (err or b"") + b"\n[faultkit: killed at the test's limit]\n"
    decode: Callable[[bytes | None], str] = lambda data: (data or b"").decode(
        "utf-8", "replace"
    )
    return decode(out), decode(err)


def _inject(
    process: subprocess.Popen, fault: Fault, marker: Path, tag: str, deadline: float
) -> float:
    """Wait for the fault's moment, send its signal; the time it was sent."""
    while fault.reached is not None and time.monotonic() < deadline:
        if marker.exists() and fault.reached in marker.read_text().split():
            break
        if process.poll() is not None:
            return time.monotonic()
        time.sleep(0.02)
    time.sleep(fault.delay)
    if fault.target == "group":
        os.killpg(process.pid, fault.signum)
    elif fault.target == "worker":
        for pid in tagged_processes(tag, exclude=(process.pid,)):
            os.kill(pid, fault.signum)
    elif fault.target == "warm":
        for pid in warm_workers(tag):
            os.kill(pid, fault.signum)
    else:
        process.send_signal(fault.signum)
    return time.monotonic()


WARM_WORKER_MODULE = b"mlsmoke.warm.server"


def warm_workers(tag: str) -> list[int]:
    """The warm workers whose environment holds ``tag``."""
    return list(tagged_processes(tag, workers=True))


def tagged_processes(
    tag: str, exclude: Sequence[int] = (), workers: bool = False
) -> dict[int, str]:
    """The running processes (pid: command line) whose environment holds ``tag``:
    the warm workers among them when ``workers``, the others otherwise. A job the
    worker forked (and what it forked) shows the worker's command line, but has a
    parent that shows it too."""
    found: dict[int, tuple[str, bool, int]] = {}
    needle = f"{TAG_VARIABLE}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):  # gone, or not ours
            continue
        shown = command.decode("utf-8", "replace")[:120]
        found[int(entry.name)] = (shown, WARM_WORKER_MODULE in command, parent)
    return {
        pid: shown
        for pid, (shown, warm, parent) in found.items()
        if (warm and not found.get(parent, ("", False))[1]) == workers
    }


def settle(
    tag: str, exclude: Sequence[int], limit: float = SETTLE_SECONDS
) -> list[str]:
    """The tagged processes still running after ``limit`` seconds; they are killed
    so that one test's leftovers do not load the next."""
    deadline = time.monotonic() + limit
    running = tagged_processes(tag, exclude)
    while running and time.monotonic() < deadline:
        time.sleep(0.05)
        running = tagged_processes(tag, exclude)
    for pid in running:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return [f"{pid} {command}" for pid, command in running.items()]


def leftover_files(tmpdir: Path) -> list[str]:
    return sorted(path.name for path in tmpdir.glob("mlsmoke*"))


def assert_clean(outcome: Outcome) -> None:
    """No mlsmoke traceback, no process and no temporary file left behind."""
    problems = outcome.problems()
    assert not problems, "\n".join(problems) + f"\nstdout:\n{outcome.stdout}"
