"""Start a gate's N ranks, as ``torchrun --nproc-per-node N`` would, and end them all.

Runs in the worker (the project's interpreter, torch imported): each rank is forked
from it, so it starts with torch and the project's modules already imported (and from
the warm worker's imports when the worker was forked from one). Each gets ``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and a free
``MASTER_PORT``; a port taken between the choice and rank 0's bind is retried.

No rank outlives the gate: one that dies or exits without its record leaves the others
``collective-timeout`` seconds to give up waiting in their collectives and report; at
the gate's deadline, whatever still runs writes every thread's stack (SIGUSR1 and
faulthandler) and is killed. The ranks share the worker's process group, which the
hook kills if the worker itself is stuck.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.ranks.record import gave_up_waiting
from mlsmoke.overfit.verdict.ranks import (
    RankEnd,
    config_error,
    judge_ranks,
    too_few_gpus,
)
from mlsmoke.overfit.verdict.result import Result

MASTER_ADDR = "127.0.0.1"
PORT_IN_USE = 75  # a rank's exit code when its MASTER_PORT was taken (EX_TEMPFAIL)
PORT_ATTEMPTS = 3
POLL = 0.02  # seconds between looks at the ranks
STACK_WAIT = 0.3  # for the ranks' stacks to be written before the kill
GRACE = 1.0  # past collective-timeout, for the surviving ranks to write their record
LATE = 0.5  # past the deadline, for rank 0 to write the Result it finished by then

StepCallback = Callable[[int, float], None]


def run_ranks(
    settings: GateSettings,
    device: str | None,
    on_step: StepCallback | None,
    deadline: float,
    free_port: Callable[[], int] | None = None,
    scratch_in: Path | None = None,
) -> Result:
    """The gate's Result from ``settings.world_size`` ranks, all ended by ``deadline``
    (time.monotonic()) plus STACK_WAIT. The ranks' records go to a directory in
    ``scratch_in``, the hook's own, which the hook removes even when it is stopped."""
    import torch

    from mlsmoke.overfit.training.device import resolve_device
    from mlsmoke.overfit.training.evidence import ProjectProblem

    key = "--device" if device else settings.key_path("device")
    try:
        resolved = resolve_device(device or settings.device)
    except ProjectProblem as error:
        return config_error(settings, f"{key}: {error}")
    if resolved == "mps":
        return config_error(
            settings, f"{key}: ranks run on the CPU (gloo) or on CUDA GPUs (NCCL)"
        )
    if resolved.startswith("cuda"):
        problem = too_few_gpus(settings, torch.cuda.device_count())
        if problem is not None:
            return problem
    choose_port = free_port or _free_port
    # The worker's timer thread is not forked, and a child that cancels it waits for
    # it forever; the ranks are bounded by ``deadline`` instead.
    faulthandler.cancel_dump_traceback_later()
    with tempfile.TemporaryDirectory(
        prefix="mlsmoke-ranks-", dir=scratch_in
    ) as scratch:
        for _ in range(PORT_ATTEMPTS):
            ends = _run_once(
                settings, resolved, on_step, deadline, Path(scratch), choose_port()
            )
            if not any(end.code == PORT_IN_USE for end in ends):
                break
        return judge_ranks(settings, ends)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((MASTER_ADDR, 0))
        return probe.getsockname()[1]


def _run_once(
    settings: GateSettings,
    device: str,
    on_step: StepCallback | None,
    deadline: float,
    scratch: Path,
    port: int,
) -> list[RankEnd]:
    for old in scratch.iterdir():
        old.unlink()
    pids = {}
    for rank in range(settings.world_size):
        env = _rank_environment(rank, settings.world_size, port)
        paths = (scratch / f"rank{rank}.json", scratch / f"rank{rank}.stack")
        pids[_fork_rank(settings, device, on_step, deadline, env, paths)] = rank
    codes = _wait(pids, deadline, settings.collective_timeout, scratch)
    return [_end_of(rank, codes[rank], scratch) for rank in range(settings.world_size)]


def _rank_environment(rank: int, world_size: int, port: int) -> dict[str, str]:
    return {"RANK": str(rank), "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(world_size), "LOCAL_WORLD_SIZE": str(world_size),
            "MASTER_ADDR": MASTER_ADDR, "MASTER_PORT": str(port)}  # fmt: skip


def _fork_rank(
    settings: GateSettings,
    device: str,
    on_step: StepCallback | None,
    deadline: float,
    env: dict[str, str],
    paths: tuple[Path, Path],
) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.environ.update(env)
        stack = open(paths[1], "w")
        faulthandler.register(signal.SIGUSR1, file=stack, all_threads=True)
        faulthandler.enable(file=stack, all_threads=True)  # gloo's abort, a crash
        code = _rank_main(settings, device, on_step, deadline, paths[0])
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _rank_main(
    settings: GateSettings,
    device: str,
    on_step: StepCallback | None,
    deadline: float,
    record: Path,
) -> int:
    from mlsmoke.overfit.training.ranks.rank import run_rank
    from mlsmoke.overfit.training.ranks.script_rank import PortTaken

    try:
        run_rank(settings, device, on_step, deadline, record)
    except PortTaken:  # the script's own init_process_group
        return PORT_IN_USE
    except Exception as error:  # the store's bind: retried on a new port
        if "address already in use" in str(error).lower():
            return PORT_IN_USE
        raise
    return 0


def _wait(
    pids: dict[int, int], deadline: float, patience: float, scratch: Path
) -> dict[int, int | None]:
    """Each rank's exit code (negative: the signal), None for those killed here."""
    codes: dict[int, int | None] = {}
    give_up_at = deadline + LATE
    while len(codes) < len(pids):
        for pid, rank in pids.items():
            if rank in codes:
                continue
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                codes[rank] = os.waitstatus_to_exitcode(status)
                left = _time_left_to_others(rank, codes[rank], scratch, patience)
                if left is not None:
                    give_up_at = min(give_up_at, time.monotonic() + left)
        if len(codes) < len(pids) and time.monotonic() >= give_up_at:
            _stop_the_rest(pids, codes)
        time.sleep(POLL)
    return codes


def _time_left_to_others(
    rank: int, code: int, scratch: Path, patience: float
) -> float | None:
    """How long the ranks still running get once ``rank`` ended; None: as long as the
    gate's deadline allows. A rank that gave up waiting for the others says they are
    not coming: they are stopped at once. A rank that failed, or rank 0 (which ends
    last), leaves them ``patience`` to give up waiting and report themselves."""
    try:
        record = json.loads((scratch / f"rank{rank}.json").read_text())
    except (OSError, ValueError):
        return patience + GRACE
    if gave_up_waiting(record.get("error", "")):
        return GRACE
    if code != 0 or rank == 0:
        return patience + GRACE
    return None


def _stop_the_rest(pids: dict[int, int], codes: dict[int, int | None]) -> None:
    """Every running rank writes its stacks, then is killed and reaped."""
    running = {pid: rank for pid, rank in pids.items() if rank not in codes}
    for pid in running:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGUSR1)
    time.sleep(STACK_WAIT)
    for pid, rank in running.items():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        codes[rank] = None


def _end_of(rank: int, code: int | None, scratch: Path) -> RankEnd:
    record_path, stack_path = (
        scratch / f"rank{rank}.json",
        scratch / f"rank{rank}.stack",
    )
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        record = None
    stack = stack_path.read_text(errors="replace") if stack_path.exists() else ""
    return RankEnd(rank, code, record, stack)
