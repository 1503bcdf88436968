"""bash-strict-mode: files per second of ``mlsmoke strict-mode`` against ``shellcheck``.

Both run side by side, in one process each over the same generated scripts, as
pre-commit would call them; the ratio is the figure. They do not do the same work
(shellcheck analyses the whole script): the comparison says what the strict-mode hook
adds to a commit that already runs shellcheck.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import scratch_dir
from benchmarks.report import Section
from mlsmoke.strict_mode.checker import Policy
from mlsmoke.strict_mode.files import Script, open_script
from mlsmoke.strict_mode.main import decide

BIN = Path(sys.executable).parent
HEADERS = {
    "strict": "set -euo pipefail\n",
    "partial": "set -eu\n",
    "missing": "",
    "late": None,  # `set -euo pipefail` after the first command
}
# A repository that runs the hook: most scripts pass, a few are new or edited.
KIND_WEIGHTS = [70, 10, 10, 10]
BODY_LINES = [
    'echo "step $i"',
    'for file in "$DATA"/*.csv; do\n  wc -l "$file"\ndone',
    'if [[ -f "$CONFIG" ]]; then\n  source "$CONFIG"\nelse\n  echo "no config" >&2\nfi',
    'python -m train --config "$CONFIG" --seed "$SEED" | tee -a "$LOG"',
    'cat <<EOF >"$OUT/README"\nRun $RUN_ID finished.\nset -e does not matter here\nEOF',
    'result=$(grep -c "loss" "$LOG" || true)',
    'case "$MODE" in\n  fast) EPOCHS=1 ;;\n  *) EPOCHS=10 ;;\nesac',
    'cleanup() {\n  rm -rf "$TMP"\n}\ntrap cleanup EXIT',
]


def write_scripts(directory: Path, count: int, seed: int = 0) -> dict[str, int]:
    """``count`` scripts of 20 to 200 lines; returns how many of each header kind."""
    rng = random.Random(seed)
    kinds = dict.fromkeys(HEADERS, 0)
    for index in range(count):
        kind = rng.choices(list(HEADERS), weights=KIND_WEIGHTS)[0]
        kinds[kind] += 1
        shebang = rng.choice(["#!/usr/bin/env bash", "#!/bin/bash"])
        comments = "".join(
            f"# Line {n} of the usage notes.\n" for n in range(rng.randint(0, 15))
        )
        header = 'ROOT="$(cd "$(dirname "$0")" && pwd)"\nexport DATA="$ROOT/data"\n'
        body = "\n".join(rng.choice(BODY_LINES) for _ in range(rng.randint(10, 80)))
        strict = HEADERS[kind]
        if strict is None:
            text = (
                f"{shebang}\n{comments}{header}echo start\nset -euo pipefail\n{body}\n"
            )
        else:
            text = f"{shebang}\n{comments}{header}{strict}{body}\n"
        path = directory / f"script_{index:04d}.sh"
        path.write_text(text)
        path.chmod(0o755)
    return kinds


def run(quick: bool) -> Section:
    count, repeats = (40, 1) if quick else (1000, 3)
    directory = scratch_dir() / "strict-mode-scripts"
    directory.mkdir(parents=True, exist_ok=True)
    kinds = write_scripts(directory, count)
    files = sorted(path.name for path in directory.glob("*.sh"))
    mlsmoke = [sys.executable, "-m", "mlsmoke", "strict-mode", *files]
    shellcheck = [str(BIN / "shellcheck"), "--format=gcc", *files]

    timings: dict[str, list[float]] = {"mlsmoke": [], "shellcheck": [], "in": []}
    for _ in range(repeats):  # interleaved, so all three see the same machine load
        checked = run_process(mlsmoke, cwd=directory)
        _expect_failures(checked, count - kinds["strict"])
        timings["mlsmoke"].append(checked.seconds)
        timings["shellcheck"].append(run_process(shellcheck, cwd=directory).seconds)
        timings["in"].append(_in_process(directory, files))

    baseline = count / statistics.median(timings["shellcheck"])
    rows: list[list[object]] = []
    for tool, seconds in [
        ("shellcheck", statistics.median(timings["shellcheck"])),
        ("mlsmoke strict-mode", statistics.median(timings["mlsmoke"])),
        ("mlsmoke strict-mode, in process", statistics.median(timings["in"])),
    ]:
        rate = count / seconds
        rows.append([tool, count, seconds, round(rate), f"{rate / baseline:.1f}x"])
    return Section(
        title="bash-strict-mode vs shellcheck",
        columns=["tool", "scripts", "seconds", "files/s", "vs shellcheck"],
        rows=rows,
        notes=[
            f"{count} generated scripts of 20 to 200 lines ({kinds['strict']} strict, "
            f"{kinds['partial']} set -eu, {kinds['missing']} without set, "
            f"{kinds['late']} with set too late); median of {repeats} interleaved "
            "runs.",
            "Both commands get every file name at once, as pre-commit passes them; "
            "the in-process row leaves out Python's start-up.",
            "shellcheck analyses whole scripts; the ratio is what the strict-mode "
            "hook adds to a commit that already runs shellcheck.",
        ],
    )


def _expect_failures(completed: ProcessRun, failing: int) -> None:
    reported = {line.split(":")[0] for line in completed.stdout.splitlines()}
    if completed.returncode not in (0, 1) or len(reported) != failing:
        raise RuntimeError(
            f"mlsmoke strict-mode flagged {len(reported)} scripts, expected {failing}:"
            f"\n{completed.stderr[-2000:]}"
        )


def _in_process(directory: Path, files: list[str]) -> float:
    """Seconds to decide every file in this process."""
    start = time.perf_counter()
    for name in files:
        script = open_script(str(directory / name))
        assert isinstance(script, Script)
        try:
            decide(script, Policy())
        finally:
            script.close()
    return time.perf_counter() - start
