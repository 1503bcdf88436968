"""``mlsmoke overfit``: run the memorization gates, or pass from the cache.

Exit 0 when every gate memorized (or passed from the cache), 1 when a gate failed, 2 on
usage, configuration or environment errors. This side never imports torch: the gates
train in the project's interpreter (``worker.py``), and a cached pass starts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from mlsmoke.project_root import find_project_root
from mlsmoke.errors import ConfigError
from mlsmoke.interpreter import (
    Candidate,
    Interpreter,
    candidate_identity,
    configured_python,
    project_candidates,
)
from mlsmoke.ahead import overfit as overfit_ahead
from mlsmoke.ahead import runs
from mlsmoke.project_process import torch_interpreter
from mlsmoke.overfit.process.cache import (
    CacheNotWritten,
    PassCache,
    cache_key,
    files_digest,
    watched_files,
)
from mlsmoke.overfit.verdict.report import verdict_block
from mlsmoke.overfit.verdict.result import Result
from mlsmoke.overfit.process.settings import (
    DEFAULT_TIER,
    DEFAULT_WATCH,
    GateSettings,
    load_gates,
    select_gates,
)
from mlsmoke.overfit.process.options import check_gate_options, write_json
from mlsmoke.overfit.process.run_gates import run_worker
from mlsmoke.warm.launch import STARTUP_LIMIT


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
        "--world-size",
        type=_world_size,
        metavar="N",
        help="start N ranks under torch.distributed (docs/distributed.md)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="run even if a cached pass matches"
    )
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    check_gate_options(args.device, args.json)
    root, gates, candidates, keys = _plan(args)
    cache = PassCache(root)
    patience = sum(gate.timeout for gate in gates) + STARTUP_LIMIT
    taken = runs.take(root, overfit_ahead.HOOK_ID, argv, keys, patience)
    if taken is not None:
        sys.stdout.write(taken.stdout)
        sys.stderr.write(taken.stderr)
        return taken.code
    results: dict[str, Result] = {}
    if not args.no_cache:
        for gate in gates:
            hit = cache.lookup(keys[gate.name])
            if hit is not None:
                results[gate.name] = hit
    pending = [gate for gate in gates if gate.name not in results]
    started = time.time()
    for group in _by_interpreter(pending):
        python = torch_interpreter(root, candidates[group[0].python])
        if args.verbose:
            print(
                f"overfit: training in {python.path} ({python.origin})", file=sys.stderr
            )
        ran, torch = run_worker(root, python.path, group, args.device, args.verbose)
        for result in ran:
            results[result.gate] = result
        stored = _Stored(cache, keys, candidates, started, args.device)
        _store_passes(root, stored, group, ran, torch, python)
    ordered = [results[gate.name] for gate in gates]
    for gate, result in zip(gates, ordered):
        result.tier = gate.tier  # also on results the worker could not make
    for result in ordered:
        print(verdict_block(result))
        if args.verbose:
            for note in result.notes:
                print(f"  {note}")
    if args.json:
        write_json(Path(args.json), [result.to_json() for result in ordered])
    return max(result.exit_code for result in ordered)


def _world_size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number of ranks, 1 or more, got {text!r}"
        )
    return int(text)


def default_keys() -> dict[str, str]:
    """The cache keys of the gates ``mlsmoke overfit`` runs with no arguments."""
    return _plan(build_parser().parse_args([]))[3]


def _plan(
    args: argparse.Namespace,
) -> tuple[Path, list[GateSettings], dict[str | None, list[Candidate]], dict[str, str]]:
    """The project root, the gates to run, their interpreters and their cache keys."""
    root = find_project_root()
    gates = select_gates(load_gates(root, args.tier), args.gate)
    if args.world_size is not None:
        gates = [replace(gate, world_size=args.world_size) for gate in gates]
    candidates = _candidates(root, gates)
    return root, gates, candidates, _cache_keys(root, gates, args.device, candidates)


def _candidates(
    root: Path, gates: list[GateSettings]
) -> dict[str | None, list[Candidate]]:
    """For each gate ``python`` key, the interpreters its gates may run in; found
    without starting any, as a cached pass starts nothing."""
    found: dict[str | None, list[Candidate]] = {}
    for gate in gates:
        if gate.python not in found:
            configured = configured_python(root, "overfit", gate.python)
            found[gate.python] = project_candidates(root, configured)
    return found


def _cache_keys(
    root: Path,
    gates: list[GateSettings],
    device: str | None,
    candidates: dict[str | None, list[Candidate]],
) -> dict[str, str]:
    digests: dict[tuple[str, ...], str] = {}
    keys = {}
    for gate in gates:
        watch = tuple(gate.watch)
        if watch not in digests:
            # The default list is not the user's to fix; their own globs must match.
            configured = list(watch) != DEFAULT_WATCH
            names = watched_files(
                root, watch, gate.key_path("watch") if configured else None
            )
            digests[watch] = files_digest(root, names)
        interpreters = [candidate_identity(c) for c in candidates[gate.python]]
        keys[gate.name] = cache_key(
            gate, device or gate.device, digests[watch], interpreters
        )
    return keys


class _Stored(NamedTuple):
    """Where passes go, under which keys, and what those keys were made of."""

    cache: PassCache
    keys: dict[str, str]
    candidates: dict[str | None, list[Candidate]]
    started: float
    device: str | None


def _store_passes(
    root: Path,
    stored: _Stored,
    gates: list[GateSettings],
    ran: list[Result],
    torch: dict,
    python: Interpreter,
) -> None:
    """Cache the passes of ``ran`` whose watched files did not change while they ran;
    a cache that cannot be written is said once, and only costs the shortcut."""
    if not any(result.passed for result in ran):
        return
    try:
        now = _cache_keys(root, gates, stored.device, stored.candidates)
    except ConfigError:
        return  # a watched file went away while the gate ran: nothing to trust
    keys = stored.keys
    try:
        for result in ran:
            if now.get(result.gate) == keys[result.gate]:
                stored.cache.store(
                    keys[result.gate], result, torch, stored.started, python.passed_over
                )
    except CacheNotWritten as error:
        print(f"overfit: the pass is not cached: {error}", file=sys.stderr)


def _by_interpreter(gates: list[GateSettings]) -> list[list[GateSettings]]:
    groups: dict[str | None, list[GateSettings]] = {}
    for gate in gates:
        groups.setdefault(gate.python, []).append(gate)
    return list(groups.values())


if __name__ == "__main__":
    raise SystemExit(main())
