"""A cached gate pass through the hook against an uncached run (target: under 0.2 s).

When no watched file changed since the last pass, ``mlsmoke overfit`` must pass without
starting the project's interpreter or importing torch. Measured on the gate benchmark's
MLP project: the console script of the hook environment pre-commit built (what the hook
runs), and the whole hook as ``pre-commit run -v`` times it.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

from benchmarks.bench_gate import write_project
from benchmarks.measure import ProcessRun, Summary, ratio, run_process
from benchmarks.precommit import (
    commit_all,
    hook_durations,
    init_git_repo,
    mlsmoke_config,
    mlsmoke_hook_environment,
    pre_commit,
    scratch_dir,
)
from benchmarks.report import Section

TARGET_SECONDS = 0.2
HOOK = "overfit-batch"


def run(quick: bool) -> Section:
    repeats = 3 if quick else 10
    home = mlsmoke_hook_environment().home
    project = init_git_repo(scratch_dir() / "cache-project")
    write_project(project, ["mlp"])
    (project / ".pre-commit-config.yaml").write_text(mlsmoke_config([HOOK]))
    commit_all(project, "gate project")
    script = hook_script(home)
    environment = script.parents[1]
    # As pre-commit runs a hook: its environment activated, first on PATH.
    hook_env = {
        **os.environ,
        "VIRTUAL_ENV": str(environment),
        "PATH": f"{environment / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }

    def gate(*flags: str) -> ProcessRun:
        command = [str(script), "overfit", *flags]
        run = run_process(command, cwd=project, env=hook_env)
        return run.check(" ".join(command))

    recording = gate()  # uncached too: the cache is empty, and this records the pass
    uncached_runs = [gate("--no-cache") for _ in range(0 if quick else 3)]
    uncached = Summary.of(uncached_runs or [recording])
    cached = Summary.of([gate() for _ in range(repeats)])
    python = script.parent / "python"
    floor = Summary.of(
        [
            run_process([str(python), "-c", "pass"], cwd=project, env=hook_env)
            for _ in range(repeats)
        ]
    )
    hook_runs = [
        pre_commit(project, home, "run", HOOK, "--all-files", "-v").check(HOOK)
        for _ in range(repeats)
    ]
    reported = statistics.median(hook_durations(r.stdout)[HOOK] for r in hook_runs)
    whole = Summary.of(hook_runs)
    rows = [
        [
            (
                "uncached: the first `mlsmoke overfit`, on an empty cache"
                if quick
                else "uncached: `mlsmoke overfit --no-cache`"
            ),
            f"{uncached.seconds:.2f}",
            "1.00x",
        ],
        [
            "cached: `mlsmoke overfit`, the hook environment's script run as"
            " pre-commit runs it",
            f"{cached.seconds:.3f}",
            ratio(cached.seconds, uncached.seconds),
        ],
        [
            "floor: `python -c pass` in the hook environment",
            f"{floor.seconds:.3f}",
            ratio(floor.seconds, uncached.seconds),
        ],
        [
            f"cached: the `{HOOK}` hook as `pre-commit run -v` times it",
            f"{reported:.2f}",
            ratio(reported, uncached.seconds),
        ],
        [
            f"cached: the whole `pre-commit run {HOOK}` process",
            f"{whole.seconds:.2f}",
            ratio(whole.seconds, uncached.seconds),
        ],
    ]
    met = "met" if cached.seconds < TARGET_SECONDS else "**missed**"
    notes = [
        f"target: a cached pass under {TARGET_SECONDS} s: {met}"
        f" ({cached.seconds:.3f} s, median of {repeats});"
        f" peak RSS cached {cached.peak_rss_mib:.0f} MiB"
        f" vs uncached {uncached.peak_rss_mib:.0f} MiB",
        "pre-commit prints durations to 0.01 s; its whole process adds its own"
        " start-up and git calls, which every hook shares",
    ]
    return Section(
        title="Cached gate pass vs an uncached run (MLP)",
        columns=["run", "seconds (median)", "vs uncached"],
        rows=rows,
        notes=notes,
    )


def hook_script(home: Path) -> Path:
    """The ``mlsmoke`` console script of the hook environment pre-commit built."""
    (script,) = home.glob("repo*/py_env-*/bin/mlsmoke")
    return script
