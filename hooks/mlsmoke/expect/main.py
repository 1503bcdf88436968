"""``mlsmoke expect``: check the project's batches against the recorded suite;
``--record`` infers the suite (showing the diff against the one there, keeping hand
edits).

Exit 0 when every expectation held (or a cached pass matched) and after a record, 1
when one failed or the project's loader raised, 2 on usage, configuration (a bad or
newer suite file, named with its line) or environment errors. This side never imports
torch: the batches are read in the project's interpreter (``worker.py``), forked from
the warm worker when there is one, and a cached pass starts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlsmoke.ahead import runs
from mlsmoke.ahead.expect import HOOK_ID
from mlsmoke.cache_files import settled
from mlsmoke.project_root import find_project_root
from mlsmoke.errors import ConfigError, EnvironmentProblem
from mlsmoke.job_imports import EXPECT, EXPECT_JOB
from mlsmoke.expect import suite_file
from mlsmoke.expect.cache import CacheNotWritten, PassCache, check_key
from mlsmoke.expect.checking import check
from mlsmoke.expect.kinds import MODEL_KINDS
from mlsmoke.expect.kinds.base import Observed
from mlsmoke.expect.merge import merge
from mlsmoke.expect.record import FACTOR, infer
from mlsmoke.expect.report import verdict
from mlsmoke.expect.settings import ExpectSettings, load_settings
from mlsmoke.interpreter import configured_python, project_candidates
from mlsmoke.overfit.process.cache import files_digest, watched_files
from mlsmoke.overfit.process.options import check_writable, write_json
from mlsmoke.overfit.process.settings import DEFAULT_WATCH
from mlsmoke.overfit.process.json_job import how_it_ended, output_tail, run_json_job
from mlsmoke.project_process import WorkerUse, torch_interpreter, warm_then_cold
from mlsmoke.warm.launch import STARTUP_LIMIT


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke expect",
        description="Check the project's batches against the expectations recorded in"
        " the suite (expectations.json). Configured in [tool.mlsmoke.expect].",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="infer the suite from the batches; shows the diff, keeps hand edits",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="run even if a cached pass matches"
    )
    parser.add_argument("--json", metavar="PATH", help="write the failures as JSON")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.json:  # before any batch is read, as the gate checks it
        check_writable(Path(args.json), "--json")
    root = find_project_root()
    settings, suite, candidates = _plan(root, args.record)
    suite_path = root / settings.suite
    cache, key = PassCache(root), None
    if suite is not None:
        key = check_key(root, settings, candidates)
        patience = settings.timeout + STARTUP_LIMIT
        taken = runs.take(root, HOOK_ID, argv, ahead_keys(root, key), patience)
        if taken is not None:
            sys.stdout.write(taken.stdout)
            sys.stderr.write(taken.stderr)
            return taken.code
        if not args.no_cache and cache.passed(key):
            print(
                f"expect: PASS (cached) {suite_path.name} held; nothing the loader"
                " imports changed"
            )
            return 0
    started = time.time()
    outcome = read_in_project(root, settings, candidates, args.verbose)
    observed = Observed(**outcome["observed"])
    _model_note(observed, settings)
    if suite is None:
        return _record(suite_path, settings, observed)
    failures = check(suite, observed)
    if args.json:
        write_json(Path(args.json), [failure.to_json() for failure in failures])
    print(verdict(failures, len(suite.expectations), len(observed.batches), suite_path))
    if failures:
        return 1
    _store(cache, key, outcome["sources"], root, started, len(suite.expectations))
    return 0


def _plan(
    root: Path, record: bool
) -> tuple[ExpectSettings, suite_file.Suite | None, list]:
    """The settings, the suite (None when recording) and the interpreters."""
    settings = load_settings(root)
    suite = None if record else suite_file.read(root / settings.suite)
    if suite is not None and not reads_the_model(suite):
        settings = dataclasses.replace(settings, model=None, loss=None)
    configured = configured_python(root, "expect", settings.python)
    return settings, suite, project_candidates(root, configured)


def default_keys() -> dict[str, str]:
    """The keys of ``mlsmoke expect`` with no arguments, for its run ahead."""
    root = find_project_root()
    settings, suite, candidates = _plan(root, record=False)
    return ahead_keys(root, check_key(root, settings, candidates))


def ahead_keys(root: Path, key: str) -> dict[str, str]:
    """The pass cache's key, and every project file the loaders may import."""
    names = watched_files(root, tuple(DEFAULT_WATCH), None)
    return {"check": key, "files": files_digest(root, names)}


def reads_the_model(suite: suite_file.Suite) -> bool:
    """Whether checking ``suite`` needs the model's widths: only then is it built."""
    return any(
        e["kind"] in MODEL_KINDS and not e.get("off") for e in suite.expectations
    )


def _model_note(observed: Observed, settings: ExpectSettings) -> None:
    """Say why the model gave no width; a forward that raised after meeting them
    (a target past the width makes the loss raise) is the bug the check names."""
    probed = observed.model or {}
    if probed.get("raised") and not probed.get("meetings"):
        print(
            f"expect: note: {settings.model}'s forward on the first batch raised"
            f" {probed['raised']} before any loss or embedding call: no width"
            " from the model (a check uses the recorded ones)",
            file=sys.stderr,
        )


def read_in_project(
    root: Path, settings: ExpectSettings, candidates: list, verbose: bool
) -> dict[str, Any]:
    """The worker's outcome; the project's errors are raised as ProjectFailed."""
    python = torch_interpreter(root, candidates)
    if verbose:
        print(
            f"expect: reading batches in {python.path} ({python.origin})",
            file=sys.stderr,
        )
    outcome = warm_then_cold(lambda warm: _run_once(root, python.path, settings, warm))
    status = outcome.get("status")
    if status == "config-error":
        message = outcome["message"]
        if outcome.get("traceback"):
            message += "\n" + outcome["traceback"]
        raise ConfigError(message)
    if status != "ok":
        raise ProjectFailed(outcome)
    return outcome


class ProjectFailed(EnvironmentProblem):
    """The project's loader raised, or its interpreter died: exit 1, with the
    project's traceback."""

    exit_code = 1

    def __init__(self, outcome: dict[str, Any]) -> None:
        text = f"expect: FAIL {outcome['message']}"
        if outcome.get("traceback"):
            text += "\n" + outcome["traceback"]
        super().__init__(text)


def _run_once(
    root: Path, python: Path, settings: ExpectSettings, warm: WorkerUse
) -> dict:
    request = {"root": str(root), "settings": settings.to_json()}
    answer, end = run_json_job(
        "expect", root, python, request, EXPECT_JOB, warm, first_use=EXPECT
    )
    if answer is not None:
        return answer
    if end.timed_out_after is not None:
        message = (
            f"the batches were not read within the timeout ({settings.timeout:g} s,"
            " tool.mlsmoke.expect.timeout)"
        )
    else:
        message = f"{python} {how_it_ended(end)} while reading the batches"
    return {
        "status": "killed",
        "message": message,
        "traceback": output_tail(end, 40) or None,
    }


def _record(path: Path, settings: ExpectSettings, observed: Observed) -> int:
    inferred = infer(observed, FACTOR)
    old = suite_file.read(path) if path.exists() else None
    expectations, lines = merge(old.expectations if old else [], inferred)
    recorded = {
        "batch": settings.batch,
        "batches": len(observed.batches),
        "seed": settings.seed,
        "validation": settings.validation,
    }
    suite = suite_file.Suite(
        path, expectations, old.factor if old else FACTOR, recorded
    )
    if (
        old is not None
        and not [line for line in lines if not line.startswith("=")]
        and suite_file.dumps(old) == suite_file.dumps(suite)
    ):
        print(f"expect: {path.name} unchanged ({len(expectations)} expectations)")
        return 0
    for line in lines if old is not None else []:
        print(f"  {line}")
    suite_file.write(suite)
    print(
        f"expect: recorded {len(expectations)} expectations from"
        f" {len(observed.batches)} batches in {path}"
    )
    return 0


def _store(
    cache: PassCache,
    key: str | None,
    sources: list[str],
    root: Path,
    started: float,
    checked: int,
) -> None:
    if key is None or not settled(root, sources, started):
        return
    try:
        cache.store(key, sources, checked)
    except CacheNotWritten as error:
        print(f"expect: the pass is not cached: {error}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
