"""``mlsmoke overfit``: run the memorization gates, or pass from the cache.

Exit 0 when every gate memorized (or passed from the cache), 1 when a gate failed, 2 on
usage, configuration or environment errors. This side never imports torch: the gates
train in the project's interpreter (``worker.py``), and a cached pass starts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.config import find_project_root
from mlsmoke.errors import UsageError
from mlsmoke.interpreter import configured_python, find_project_interpreter
from mlsmoke.overfit.process.cache import (
    PassCache,
    cache_key,
    files_digest,
    watched_files,
)
from mlsmoke.overfit.verdict.report import verdict_block
from mlsmoke.overfit.verdict.result import Result
from mlsmoke.overfit.process.settings import (
    DEFAULT_TIER,
    GateSettings,
    device_name,
    load_gates,
    select_gates,
)
from mlsmoke.overfit.process.spawn import run_worker


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke overfit",
        description="Train the project's model on one batch; fail unless it memorizes"
        " it. Configured in [tool.mlsmoke.overfit] of pyproject.toml.",
    )
    parser.add_argument("--gate", metavar="NAME", help="run only this gate")
    parser.add_argument(
        "--tier",
        default=DEFAULT_TIER,
        metavar="T",
        help="commit (default, seconds), pr, nightly, or a tier of your config",
    )
    parser.add_argument("--device", metavar="D", help="auto, cpu, cuda, cuda:N or mps")
    parser.add_argument(
        "--no-cache", action="store_true", help="run even if a cached pass matches"
    )
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.device is not None:
        device_name(args.device, "--device")
    root = find_project_root()
    gates = select_gates(load_gates(root, args.tier), args.gate)
    cache = PassCache(root)
    keys = _cache_keys(root, gates, args.device)
    results: dict[str, Result] = {}
    if not args.no_cache:
        for gate in gates:
            hit = cache.lookup(keys[gate.name])
            if hit is not None:
                results[gate.name] = hit
    pending = [gate for gate in gates if gate.name not in results]
    for group in _by_interpreter(pending):
        python = find_project_interpreter(
            root, ["torch"], configured_python(root, "overfit", group[0].python)
        )
        if args.verbose:
            print(
                f"overfit: training in {python.path} ({python.origin})", file=sys.stderr
            )
        ran, torch = run_worker(root, python.path, group, args.device, args.verbose)
        for result in ran:
            results[result.gate] = result
            cache.store(keys[result.gate], result, torch)
    ordered = [results[gate.name] for gate in gates]
    for result in ordered:
        print(verdict_block(result))
        if args.verbose:
            for note in result.notes:
                print(f"  {note}")
    if args.json:
        _write_json(Path(args.json), ordered)
    return max(result.exit_code for result in ordered)


def _cache_keys(
    root: Path, gates: list[GateSettings], device: str | None
) -> dict[str, str]:
    digests: dict[tuple[str, ...], str] = {}
    keys = {}
    for gate in gates:
        watch = tuple(gate.watch)
        if watch not in digests:
            digests[watch] = files_digest(root, watched_files(root, watch))
        keys[gate.name] = cache_key(gate, device or gate.device, digests[watch])
    return keys


def _by_interpreter(gates: list[GateSettings]) -> list[list[GateSettings]]:
    groups: dict[str | None, list[GateSettings]] = {}
    for gate in gates:
        groups.setdefault(gate.python, []).append(gate)
    return list(groups.values())


def _write_json(path: Path, results: list[Result]) -> None:
    data = [_finite(result.to_json()) for result in results]
    try:
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as error:
        raise UsageError(f"--json {path}: cannot write: {error.strerror}") from None


def _finite(value: object) -> object:
    """``value`` with NaN and infinities as strings: the JSON file stays standard."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


if __name__ == "__main__":
    raise SystemExit(main())
