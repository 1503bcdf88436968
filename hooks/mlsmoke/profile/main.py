"""``mlsmoke profile``: profile the project's training step, say where the time goes
and what to change, and keep a trace.

Exit codes: 0 profiled (and, with ``--check``, steps/s held); 1 the project's code
failed (``data-error``, ``train-error``, a timeout or a killed worker) or ``--check``
found steps/s fell beyond the tolerance; 2 usage, configuration or environment errors
(a config key, a device that is not there, ``--steps 0``, no record to check against).
This side never imports torch: the profile runs in the project's interpreter.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlsmoke.cache_files import CacheDirectory
from mlsmoke.project_root import find_project_root
from mlsmoke.errors import UsageError
from mlsmoke.interpreter import (
    configured_python,
    first_that_imports,
    project_candidates,
)
from mlsmoke.overfit.process.options import (
    check_gate_options,
    check_writable,
    write_json,
)
from mlsmoke.overfit.process.deaths import WorkerEnd
from mlsmoke.overfit.process.json_job import how_it_ended, output_tail, run_json_job
from mlsmoke.profile import baseline, targets
from mlsmoke.profile.figures import Figures
from mlsmoke.profile.report import summary
from mlsmoke.profile.rules import recommend
from mlsmoke.profile.targets import ScriptTarget, Target

DEFAULT_STEPS = 20
DEFAULT_WARMUP = 5
DEFAULT_TIMEOUT = 600.0
WORKER = "mlsmoke.profile.worker"
# The outcome statuses that are the project's code failing (exit 1); the rest exit 2.
PROJECT_FAILURES = ("data-error", "train-error", "timeout", "killed")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _count(text: str) -> int:
    return 0 if text.strip() == "0" else _positive_int(text)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke profile",
        usage="%(prog)s [options] [--script PATH] [-- SCRIPT ARGS...]",
        description="Profile the project's training step (the overfit gate's model,"
        " loss and recipe, on its real loader, or a training script as it runs):"
        " where the time goes, what to change, and a Chrome/Perfetto trace.",
        epilog="Arguments after -- are the script's: mlsmoke profile --script"
        " train.py -- --device=cpu --compile=False",
    )
    parser.add_argument("--gate", metavar="NAME", help="profile only this gate")
    parser.add_argument(
        "--script", metavar="PATH",
        help="profile this training script (python PATH ARGS) instead of the gate's"
        " model: its own model, data and optimizer",
    )  # fmt: skip
    parser.add_argument(
        "--steps", type=_positive_int, default=DEFAULT_STEPS, metavar="N",
        help=f"profiled steps (default {DEFAULT_STEPS})",
    )  # fmt: skip
    parser.add_argument(
        "--warmup", type=_count, default=DEFAULT_WARMUP, metavar="N",
        help=f"steps before measuring (default {DEFAULT_WARMUP})",
    )  # fmt: skip
    parser.add_argument("--device", metavar="D", help="auto, cpu, cuda, cuda:N or mps")
    parser.add_argument(
        "--trace", metavar="PATH",
        help="where the trace goes (.json.gz; default: .mlsmoke/profile/ in the"
        " project)",
    )  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="every figure, as JSON")
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument(
        "--record", action="store_true",
        help=f"store steps/s and the split for this device in {baseline.FILE_NAME}",
    )  # fmt: skip
    kept.add_argument(
        "--check", action="store_true",
        help="fail when steps/s fell more than the tolerance from the record",
    )  # fmt: skip
    parser.add_argument(
        "--tolerance", type=_fraction, default=baseline.DEFAULT_TOLERANCE,
        metavar="F", help="--check's allowed fall of steps/s (default 0.2)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="PATH",
        help=f"the record file (default: {baseline.FILE_NAME} at the project root)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"for each gate's profile (default {DEFAULT_TIMEOUT:g})",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ours, script_args = targets.split_dashes(list(sys.argv[1:] if argv is None
                                                  else argv))  # fmt: skip
    args = build_parser().parse_args(ours)
    check_gate_options(args.device, args.json)
    if args.trace and not args.trace.endswith(".json.gz"):
        raise UsageError(f"--trace {args.trace}: the trace is a .json.gz file")
    if args.trace:
        check_writable(Path(args.trace), "--trace")
    root = find_project_root()
    chosen = targets.choose(root, args.script, script_args, args.gate)
    scripts = [t for t in chosen if isinstance(t, ScriptTarget)]
    if args.device and scripts:
        raise UsageError(
            f"--device: {scripts[0].path} picks its own device; give it in the"
            " script's arguments (after --, e.g. -- --device=cpu)"
        )
    record_file = Path(args.baseline) if args.baseline else root / baseline.FILE_NAME
    if args.check:  # a broken or missing record fails before anything runs
        baseline.require(record_file, [target.name for target in chosen])
    exit_code, report = 0, []
    for target in chosen:
        outcome = _profile_one(root, target, args, len(chosen) > 1)
        exit_code = max(exit_code, _show(outcome, args, record_file))
        report.append(outcome)
    if args.json:
        write_json(Path(args.json), report)
    return exit_code


def _trace_path(asked: str | None, name: str, several: bool, root: Path) -> str:
    """--trace as given for one profile, with each one's name for several; else
    ``<name>.json.gz`` in the project's cache directory (the temporary directory
    when that cannot be made)."""
    safe = name.replace("/", "-")
    if asked is not None:
        return asked.replace(".json.gz", f"-{safe}.json.gz") if several else asked
    cache = CacheDirectory(root, "profile")
    try:
        cache.prepare()
        return str(cache.directory / f"{safe}.json.gz")
    except OSError:
        return str(Path(tempfile.gettempdir(), f"mlsmoke-profile-{safe}.json.gz"))


def _profile_one(
    root: Path, target: Target, args: argparse.Namespace, several: bool
) -> dict:
    configured = configured_python(root, "overfit", target.python)
    python = first_that_imports(project_candidates(root, configured), ["torch"])
    trace = _trace_path(args.trace, target.name, several, root)
    what = "script" if isinstance(target, ScriptTarget) else "gate"
    request = {
        "root": str(root),
        what: target.to_json(),
        "steps": args.steps,
        "warmup": args.warmup,
        "trace": str(Path(trace).resolve()),
        "device": args.device,
        "timeout": args.timeout,
    }
    outcome, end = run_json_job("profile", root, python.path, request, WORKER)
    if outcome is None:
        outcome = _ended_early(target.name, python.path, end, args.timeout)
    outcome["trace"] = trace
    return outcome


def _ended_early(
    name: str, python: Path, end: WorkerEnd, timeout: float
) -> dict[str, Any]:
    tail = output_tail(end, 40)
    evidence = [tail] if tail else []
    if end.timed_out_after is not None:
        message = (
            f"no profile within the timeout ({timeout:g} s, --timeout): the steps"
            " are slower than that, or a factory never returned"
        )
        return {"gate": name, "status": "timeout", "message": message,
                "evidence": evidence}  # fmt: skip
    return {"gate": name, "status": "killed",
            "message": f"{python} {how_it_ended(end)} before the profile finished",
            "evidence": evidence}  # fmt: skip


def _show(outcome: dict[str, Any], args: argparse.Namespace, record_file: Path) -> int:
    if outcome["status"] != "ok":
        print(f"profile {outcome['gate']}: {outcome['status']}: {outcome['message']}")
        for text in outcome.get("evidence", []):
            print("  " + text.replace("\n", "\n  "))
        return 1 if outcome["status"] in PROJECT_FAILURES else 2
    figures = Figures.from_json(outcome["figures"])
    found = recommend(figures)
    outcome["recommendations"] = [item.to_json() for item in found]
    print(summary(figures, found, outcome["trace"]))
    if args.record:
        baseline.record(record_file, figures)
        print(f"recorded {figures.steps_per_second:.2f} steps/s on"
              f" {figures.device_name} in {record_file}")  # fmt: skip
    if args.check:
        held, lines = baseline.check(record_file, figures, args.tolerance)
        outcome["check"] = {"passed": held, "report": lines}
        print("\n".join(lines))
        return 0 if held else 1
    return 0
