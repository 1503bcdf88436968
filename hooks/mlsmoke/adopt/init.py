"""``mlsmoke init [DIR]``: adopt mlsmoke in an existing repository, green on day one.

Wires the template's hooks into .pre-commit-config.yaml, baselines today's violations
in each tool's own config, and sets up the gate or leaves it commented out with the
candidates found. Nothing is written until every edit has been made and re-parsed;
``--dry-run`` prints the diffs instead.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.adopt import candidates, gate_setup, measure, own_hooks, report, standard
from mlsmoke.adopt import step_candidates
from mlsmoke.adopt import flake8_config, tools, wiring
from mlsmoke.adopt.baselines import BLACK, FLAKE8, STRICT_MODE, Debt, Project
from mlsmoke.adopt.textfile import check_all_writable, write_all
from mlsmoke.adopt.yamltree import compose
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, UsageError
from mlsmoke.new import find_template


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke init",
        description="Adopt mlsmoke's hooks in an existing repository: wire them into "
        ".pre-commit-config.yaml and baseline today's violations, so that "
        "`pre-commit run --all-files` passes and new files meet every rule.",
    )
    parser.add_argument("dir", nargs="?", default=".", type=Path)
    parser.add_argument("--model", help="the gate's model factory, module:callable")
    parser.add_argument("--batch", help="the gate's batch factory, module:callable")
    parser.add_argument(
        "--format", action="store_true", help="run black once instead of baselining it"
    )
    parser.add_argument(
        "--fix-scripts",
        action="store_true",
        help="fix shell scripts' strict mode instead of baselining them",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="re-measure existing baselines and replace an existing gate config",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the diffs, write nothing"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    root = args.dir.resolve()
    if not root.is_dir():
        raise UsageError(f"{args.dir}: not a directory")
    project = Project.load(root)
    compose(project.config.text, project.name(project.config))  # fails before work
    kept = project.read() if project.config.original is not None else {}
    files = measure.repo_files(project)
    found = candidates.find(root, measure.files_for("flake8", files))
    steps = step_candidates.find(root, measure.files_for("flake8", files))
    gate = gate_setup.choose(project, found, args)
    name = project.name(project.config)
    project.config.text = wiring.wire(
        project.config.text,
        name,
        standard.standard_repos(),
        gate.on,
        wiring.gate_comment(found),
    )
    if project.flake8.original is None:
        project.flake8.text = (find_template() / standard.TEMPLATE_FLAKE8).read_text(
            "utf-8"
        )
    gate_setup.write(project, gate)
    debt, checked, notes = _baseline(project, args, {} if args.force else kept)
    notes += step_candidates.notes(steps)
    changed = [project.name(file) for file in project.files() if file.changed]
    _finish(project, args)
    seconds = time.perf_counter() - started
    print(_summary(project, args, changed, gate, notes, debt, seconds))
    print(report.table(debt, checked))
    if gate.run and not args.dry_run:
        return _run_gate(root)
    return EXIT_OK


def _baseline(project: Project, args: argparse.Namespace, kept: Debt):
    """Measure and write the baselines of the tools that have none; ``kept``, the
    existing ones (all of them replaced with --force), stay as they are."""
    notes = []
    if kept:
        notes.append("baselines exist: kept (`mlsmoke debt --update` shrinks them)")
    for tool in project.read():
        if tool not in kept:
            project.write(tool, {})
    if FLAKE8 not in kept:
        project.flake8.text = flake8_config.write_baseline(project.flake8.text, {})
    if not args.dry_run:
        _fix_first(project, args, kept)
    result = measure.measure(project, _unmeasured(project, kept))
    if args.dry_run:  # the fixes would run first: not debt
        for asked, tool, verb in (
            (args.format, BLACK, "format"),
            (args.fix_scripts, STRICT_MODE, "fix"),
        ):
            if asked and tool in result.debt:
                count = len(result.debt.pop(tool))
                result.notes.append(f"{tool}: would {verb} {count} files")
    for tool, failures in result.debt.items():
        project.write(tool, failures)
    return project.read(), result.checked, notes + result.notes


def _unmeasured(project: Project, kept: Debt) -> dict[str, list[str]] | None:
    """Every file of each wired tool without a baseline (None: all tools)."""
    if not kept:
        return None
    files = measure.repo_files(project)
    return {
        tool: measure.files_for(tool, files)
        for tool in measure.wired_tools(project)
        if tool not in kept
    }


def _fix_first(project: Project, args: argparse.Namespace, kept: Debt) -> None:
    """--format and --fix-scripts change files before the debt is measured."""
    only = {}
    if args.format and BLACK not in kept:
        only[BLACK] = measure.files_for(BLACK, measure.repo_files(project))
    if args.fix_scripts and STRICT_MODE not in kept:
        only[STRICT_MODE] = measure.files_for(STRICT_MODE, measure.repo_files(project))
    if not only:
        return
    check_all_writable(project.files())  # before the sources change, not after
    found = measure.measure(project, only).debt
    if BLACK in found:
        tools.format_with_black(project.root, sorted(found[BLACK]))
    if STRICT_MODE in found:
        own_hooks.fix_scripts(project.root, sorted(found[STRICT_MODE]))


def _finish(project: Project, args: argparse.Namespace) -> None:
    if not args.dry_run:
        write_all(project.files())
        return
    for file in project.files():
        if file.changed:
            print(file.diff(project.root), end="")


def _summary(project, args, changed, gate, notes, debt, seconds: float) -> str:
    verb = "would write" if args.dry_run else "wrote"
    lines = [f"mlsmoke init: {project.root} ({seconds:.1f} s)"]
    lines.append(f"  {verb}: {', '.join(changed) or 'nothing (already adopted)'}")
    lines.append(f"  gate: {gate.summary}")
    lines += [f"  note: {note}" for note in notes]
    lines.append(
        "  next: pre-commit install && pre-commit run --all-files; "
        "fix a baselined file, then `mlsmoke debt --update`"
    )
    if BLACK in debt:  # black skips force-excluded files even when named: override
        lines.append(
            "  black's baseline goes with: black --force-exclude '^$' "
            "$(mlsmoke debt --files black) && mlsmoke debt --update"
        )
    return "\n".join(lines)


def _run_gate(root: Path) -> int:
    print("Running the gate once: mlsmoke overfit", flush=True)
    ran = subprocess.run([sys.executable, "-m", "mlsmoke", "overfit"], cwd=root)
    if ran.returncode:
        print("mlsmoke init: the gate does not pass yet (see above)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
