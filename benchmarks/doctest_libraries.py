"""The doctest hook against ``pytest --doctest-modules`` on real library sources.

Each library's wheel is fetched with ``pip download`` (pinned exactly) into the
benchmark cache (``$MLSMOKE_BENCH_CACHE``, else ``~/.cache/mlsmoke-bench``) and
unpacked into a fresh project per run. Both tools run in this interpreter, on the
same files, with the same option flags (from the project's ``pytest.ini``, which the
hook reads) and the same seed before each docstring (the hook's ``seed`` key; for
pytest an autouse fixture in ``conftest.py``, as torch libraries do). pytest runs with
``--doctest-continue-on-failure`` so that both run every example of a docstring, and
with the plugin ``benchmarks.doctest_counter``, which counts the examples it ran and
applies ``__doctest_skip__``/``__doctest_requires__`` as pytest-doctestplus does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.measure import ProcessRun, Summary, ratio, run_process

OPTIONFLAGS = "ELLIPSIS NORMALIZE_WHITESPACE"
SEED = 42
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    package: str  # the top-level directory of its sources
    commits: tuple[int, ...]  # files per commit, besides the whole tree
    seed: int | None = None  # seeded before each docstring by both tools


LIBRARIES = (
    Library("boltons", "25.0.0", "boltons", (5,)),  # pure Python, 574 examples
    Library("torchmetrics", "1.9.0", "torchmetrics", (5, 20), SEED),  # torch, 7,000+
)

CONFTEST = """\
import random

import pytest


@pytest.fixture(autouse=True)
def _seed(request):
    if request.node.__class__.__name__ == "DoctestItem":
        random.seed(SEED)
        for name, seeding in (("numpy", "random.seed"), ("torch", "manual_seed")):
            try:
                module = __import__(name)
            except ImportError:
                continue
            target = module
            for part in seeding.split("."):
                target = getattr(target, part)
            target(SEED)
"""

_FAILURE_HEADER = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?: in \S+)?$")
_SKIPPED = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):.* skipped: (?P<why>.*)$")
_SUMMARY = re.compile(r"(?P<failed>\d+) of (?P<ran>\d+) examples failed")
_FILE_FAILURE = re.compile(
    r"^(?P<path>[^\s:]+): (?P<why>timed out after .*|cannot .*)$"
)


def cache_directory() -> Path:
    default = Path.home() / ".cache" / "mlsmoke-bench"
    return Path(os.environ.get("MLSMOKE_BENCH_CACHE", default))


def fetch(library: Library) -> Path:
    """The library's wheel, downloaded once into the benchmark cache."""
    wheels = cache_directory() / "wheels"
    pattern = f"{library.name.replace('-', '_')}-{library.version}-*.whl"
    found = sorted(wheels.glob(pattern))
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                f"{library.name}=={library.version}",
                "-d",
                str(wheels),
            ],
            check=True,
        )
        found = sorted(wheels.glob(pattern))
    return found[0]


def make_project(library: Library, root: Path) -> list[str]:
    """The library's sources as a project at ``root``; its files with examples."""
    with zipfile.ZipFile(fetch(library)) as wheel:
        for member in wheel.namelist():
            if member.startswith(f"{library.package}/"):
                wheel.extract(member, root)
    pyproject = f'[project]\nname = "{library.name}-bench"\n'
    if library.seed is not None:
        pyproject += f"[tool.mlsmoke.doctest]\nseed = {library.seed}\n"
        (root / "conftest.py").write_text(CONFTEST.replace("SEED", str(library.seed)))
    (root / "pyproject.toml").write_text(pyproject)
    (root / "pytest.ini").write_text(f"[pytest]\ndoctest_optionflags = {OPTIONFLAGS}\n")
    return sorted(
        path.relative_to(root).as_posix()
        for path in (root / library.package).rglob("*.py")
        if b">>>" in path.read_bytes()
    )


def spread(files: list[str], count: int) -> list[str]:
    """``count`` files spread evenly over the sorted list: a commit's worth."""
    if count >= len(files):
        return list(files)
    step = len(files) / count
    return [files[int(index * step)] for index in range(count)]


@dataclass
class Outcome:
    examples: int
    failed: set[tuple[str, int]]
    skipped: dict[tuple[str, int], str]
    file_failures: dict[str, str] = field(default_factory=dict)


def hook_outcome(run: ProcessRun) -> Outcome:
    failed, skipped, examples, files = set(), {}, 0, {}
    for line in run.stdout.splitlines():
        if match := _FILE_FAILURE.match(line):
            files[match["path"]] = match["why"]
        elif match := _SKIPPED.match(line):
            skipped[(match["path"], int(match["line"]))] = match["why"]
        elif match := _FAILURE_HEADER.match(line):
            failed.add((match["path"], int(match["line"])))
        if match := _SUMMARY.search(line):
            examples = int(match["ran"])
    return Outcome(examples, failed, skipped, files)


def pytest_outcome(counter: Path) -> Outcome:
    data = json.loads(counter.read_text())
    failed = {(path, int(line)) for path, line in data["failed"]}
    return Outcome(int(data["examples"]), failed, {})


def compare(
    library: Library, label: str, files: list[str], root: Path, repeats: int
) -> tuple[list[object], list[str]]:
    """One row, and the notes explaining each disagreement."""
    counter = root / "pytest-counter.json"
    env = {
        **os.environ,
        "MLSMOKE_PYTHON": sys.executable,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": str(REPO),  # for -p benchmarks.doctest_counter
        "DOCTEST_COUNTER_OUT": str(counter),
        # No model downloads: this machine reaches package indexes only, and both
        # tools would spend minutes in huggingface_hub's retries.
        "HF_HUB_OFFLINE": "1",
    }
    hook = [str(Path(sys.executable).with_name("mlsmoke")), "doctest", "--no-cache"]
    hook += ["--verbose", *files]
    pytest = [sys.executable, "-m", "pytest", "--doctest-modules", "-q"]
    pytest += ["--doctest-continue-on-failure", "-p", "no:cacheprovider"]
    pytest += ["-p", "benchmarks.doctest_counter", *files]
    hook_runs, pytest_runs = [], []
    for _ in range(repeats):  # interleaved
        hook_runs.append(run_process(hook, root, env, timeout=1800))
        pytest_runs.append(run_process(pytest, root, env, timeout=1800))
    for run, what in ((hook_runs[-1], "mlsmoke doctest"), (pytest_runs[-1], "pytest")):
        if run.returncode not in (0, 1):
            run.check(what)
    ours, theirs = hook_outcome(hook_runs[-1]), pytest_outcome(counter)
    notes = disagreements(library, label, ours, theirs)
    hook_summary, pytest_summary = Summary.of(hook_runs), Summary.of(pytest_runs)
    row = [
        f"{library.name}=={library.version}",
        label,
        len(files),
        f"{ours.examples} / {theirs.examples}",
        f"{len(ours.failed)} / {len(theirs.failed)}",
        len(ours.failed ^ theirs.failed),
        hook_summary.seconds,
        pytest_summary.seconds,
        ratio(pytest_summary.seconds, hook_summary.seconds),
        f"{hook_summary.peak_rss_mib:.0f} / {pytest_summary.peak_rss_mib:.0f}",
    ]
    return row, notes


def disagreements(
    library: Library, label: str, ours: Outcome, theirs: Outcome
) -> list[str]:
    """Each example one tool failed and the other did not, with the reason."""
    notes = []
    for where in sorted(theirs.failed - ours.failed):
        why = ours.skipped.get(where)
        whole_file = ours.file_failures.get(where[0])
        if why:
            reason = f"mlsmoke skipped it ({why}); pytest ran it and it failed"
        elif whole_file:
            reason = (
                f"mlsmoke failed the whole file ({whole_file}); pytest this example"
            )
        else:
            reason = "failed under pytest only"
        notes.append(f"{library.name} {label}: {where[0]}:{where[1]}: {reason}")
    for where in sorted(ours.failed - theirs.failed):
        notes.append(
            f"{library.name} {label}: {where[0]}:{where[1]}: failed under mlsmoke only"
        )
    return notes


def rows(quick: bool) -> tuple[list[list[object]], list[str]]:
    """Each library's commits; a torch library's whole tree runs once (minutes)."""
    repeats = 1 if quick else 3
    table, notes = [], []
    for library in LIBRARIES[:1] if quick else LIBRARIES:
        with tempfile.TemporaryDirectory(prefix=f"bench-{library.name}-") as scratch:
            root = Path(scratch)
            files = make_project(library, root)
            commits = [(f"{n} files", spread(files, n)) for n in library.commits]
            commits.append(("whole tree", files))
            for label, chosen in commits:
                for stale in (root / ".mlsmoke",):
                    shutil.rmtree(stale, ignore_errors=True)
                once = label == "whole tree" and library.seed is not None
                times = 1 if once else repeats
                row, explained = compare(library, label, chosen, root, times)
                table.append(row)
                notes += explained
    return table, notes
