"""``mlsmoke suites``: regression suites of hard examples.

``mlsmoke suites record`` evaluates the configured checkpoint and writes the suites
(``hard``, ``wrong``, slices, by-hand) under ``suites/``; ``mlsmoke suites check
--checkpoint PATH`` evaluates another checkpoint and compares, never rewriting a
suite file. Exit codes: 0 recorded, or every suite held; 1 a suite (or the whole set)
fell beyond its tolerance; 2 usage, configuration or bad input (a checkpoint that does
not fit the model, a dataset whose content changed, a suite file of another version,
a project callable that raised). This side never imports torch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.project_root import find_project_root
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, UsageError
from mlsmoke.overfit.process.options import check_gate_options, write_json
from mlsmoke.suites import passed_stamp, session, settings as schema
from mlsmoke.suites.process import evaluate_in_project
from mlsmoke.suites.suite_file import read_directory


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke suites",
        description="Regression suites for a trained model: record the examples it"
        " gets most wrong, then fail a checkpoint that gets worse on them."
        " Configured in [tool.mlsmoke.suites] of pyproject.toml (docs/suites.md).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    record = actions.add_parser(
        "record", help="evaluate the checkpoint and write the suites"
    )
    check = actions.add_parser(
        "check", help="evaluate a checkpoint against the recorded suites"
    )
    for sub in (record, check):
        sub.add_argument(
            "--checkpoint", metavar="PATH",
            help="the checkpoint (default: tool.mlsmoke.suites.checkpoint)",
        )  # fmt: skip
        sub.add_argument("--device", metavar="D", help="auto, cpu, cuda, cuda:N or mps")
        sub.add_argument("--json", metavar="PATH", help="write the outcome as JSON")
        sub.add_argument("-v", "--verbose", action="store_true",
                         help="show the project's own output")  # fmt: skip
    check.add_argument(
        "--if-changed", action="store_true",
        help="only when the checkpoint, the suites or the configuration changed since"
        " the last pass (the pre-push hook); no checkpoint file: nothing to check",
    )  # fmt: skip
    check.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    check_gate_options(args.device, args.json)
    root = find_project_root()
    settings = schema.load(root)
    checkpoint, key = _checkpoint(root, settings, args.checkpoint)
    directory = root / settings.directory
    if args.action == "record":
        return _record(root, settings, checkpoint, key, directory, args)
    return _check(root, settings, checkpoint, key, directory, args)


def _checkpoint(
    root: Path, settings: schema.SuitesSettings, given: str | None
) -> tuple[Path, str]:
    """The checkpoint to evaluate and the key or option that names it."""
    if given is not None:
        return Path(given).resolve(), f"--checkpoint {given}"
    if settings.checkpoint is None:
        raise UsageError(
            f"no checkpoint: give --checkpoint PATH or set"
            f' {settings.key_path("checkpoint")} = "path/to/model.pt"'
        )
    return root / settings.checkpoint, settings.key_path("checkpoint")


def _record(
    root: Path,
    settings: schema.SuitesSettings,
    checkpoint: Path,
    key: str,
    directory: Path,
    args: argparse.Namespace,
) -> int:
    evaluation = evaluate_in_project(root, settings, checkpoint, key, args.device,
                                     args.verbose)  # fmt: skip
    evaluation.checkpoint = str(_shown(root, checkpoint))
    recorded = session.record(settings, evaluation, directory)
    print("\n".join(recorded.lines(_shown(root, directory))))
    if args.json:
        write_json(Path(args.json), recorded.to_json())
    return EXIT_OK


def _check(
    root: Path,
    settings: schema.SuitesSettings,
    checkpoint: Path,
    key: str,
    directory: Path,
    args: argparse.Namespace,
) -> int:
    if args.if_changed and not checkpoint.is_file():
        print(f"suites check: no checkpoint at {_shown(root, checkpoint)}; nothing"
              " to check")  # fmt: skip
        return EXIT_OK
    stamp = passed_stamp.stamp(root, checkpoint, directory)
    if args.if_changed and passed_stamp.passed_before(root, stamp):
        print(f"suites check: {_shown(root, checkpoint)} passed before, unchanged")
        return EXIT_OK
    suites = read_directory(directory)  # a bad suite file fails before evaluating
    evaluation = evaluate_in_project(root, session.for_check(settings), checkpoint,
                                     key, args.device, args.verbose)  # fmt: skip
    evaluation.checkpoint = str(_shown(root, checkpoint))
    checked = session.check(settings, suites, evaluation)
    print(checked.report())
    if args.json:
        write_json(Path(args.json), checked.to_json())
    if not checked.passed:
        return EXIT_FAILED
    unkept = passed_stamp.remember_pass(root, stamp, evaluation.checkpoint)
    if unkept and args.if_changed:
        print(f"suites check: the pass is not kept: {unkept}", file=sys.stderr)
    return EXIT_OK


def _shown(root: Path, path: Path) -> Path:
    try:
        return path.resolve().relative_to(root)
    except ValueError:
        return path


if __name__ == "__main__":
    raise SystemExit(main())
