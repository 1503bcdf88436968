"""``mlsmoke init [DIR]``: adopt mlsmoke in an existing repository, green on day one.

Wires the template's hooks into .pre-commit-config.yaml, baselines today's violations
in each tool's own config, and sets up the gate or leaves it commented out with the
candidates found. Nothing is written until every edit has been made and re-parsed;
``--dry-run`` prints the diffs instead.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.adopt import candidates, gate_module, gate_setup, measure, own_hooks
from mlsmoke.adopt import flake8_config, longer_budget, report, standard
from mlsmoke.adopt import step_candidates, tools
from mlsmoke.adopt import calibrate, hook_form, offline_switch, script_plan, wiring
from mlsmoke.adopt import ddp_setup, expectations_setup
from mlsmoke.adopt.nothing_written import why_nothing
from mlsmoke.adopt.baselines import BLACK, FLAKE8, STRICT_MODE, Debt, Project
from mlsmoke.adopt.textfile import TextFile, check_all_writable, read_text, write_all
from mlsmoke.adopt.yamltree import compose
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, UsageError
from mlsmoke.hook_source import HookSource, find_hook_source, uncommitted
from mlsmoke.new import add_hook_source_arguments, find_template


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
        "--no-gate",
        action="store_true",
        help="leave overfit-batch commented out, without running it",
    )
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
    add_hook_source_arguments(parser)
    parser.add_argument(
        "--online",
        action="store_true",
        help="turn hooks that --offline made `repo: local` back into GitHub repos",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    hook_form.check_arguments(args.offline, args.online)
    started = time.perf_counter()
    root = args.dir.resolve()
    if not root.is_dir():
        raise UsageError(f"{args.dir}: not a directory")
    project = Project.load(root)
    compose(project.config.text, project.name(project.config))  # fails before work
    source = find_hook_source(args.hooks_repo, args.hooks_rev)
    repos = standard.standard_repos(
        standard.template_config_text(source=source, offline=args.offline)
    )
    kept = project.read() if project.config.original is not None else {}
    files = measure.repo_files(project)
    found = candidates.find(root, measure.files_for("flake8", files))
    steps = step_candidates.find(root, measure.files_for("flake8", files))
    script = script_plan.find(
        root, measure.files_for("flake8", files), gate_setup.budget(project)
    )
    gate = gate_setup.choose(project, found, args, script)
    gate = gate_setup.with_step(
        project, gate, step_candidates.the_one(steps), args.dry_run
    )
    name = project.name(project.config)
    waiting = ["Off until its first run passes: `mlsmoke init` runs it once."]
    comment = wiring.gate_comment(found, waiting if gate.run else ())
    if gate.module is not None and not gate.run:
        comment = wiring.gate_comment(found, _todo_lines(gate.module.todo), True)
    project.config.text = wiring.wire(project.config.text, name, repos, comment)
    switched = hook_form.switch(project, args.offline, args.online, source)
    if project.flake8.original is None:
        project.flake8.text = (find_template() / standard.TEMPLATE_FLAKE8).read_text(
            "utf-8"
        )
    gate_setup.write(project, gate)
    module = _gate_module_file(project, gate)
    debt, checked, notes = _baseline(project, args, {} if args.force else kept)
    if gate.script is not None:
        notes += gate.script.notes()
    elif gate.step is not None:
        notes.append(step_candidates.trial_note(gate.step))
    else:
        notes += step_candidates.notes(steps)
    notes += _source_notes(source) + switched
    notes += hook_form.github_note(project, args.offline)
    changed = [project.name(file) for file in project.files() if file.changed]
    if module is not None:
        changed.append(project.name(module))
    _finish(project, args, module)
    seconds = time.perf_counter() - started
    print(_summary(project, args, changed, gate, notes, debt, seconds))
    print(report.table(debt, checked))
    if not gate.run or args.dry_run:
        return EXIT_OK
    return _first_run(project, gate, found, repos)


def _todo_lines(todo: list[str]) -> list[str]:
    return [line for item in todo for line in textwrap.wrap(f"TODO {item}", 76)]


def _gate_module_file(project: Project, gate: gate_setup.Gate) -> TextFile | None:
    """mlsmoke_gate.py, formatted as the project's black would, or None."""
    if gate.module is None:
        return None
    module = read_text(project.root / gate_module.FILENAME)
    module.text = gate.module.text
    return module


def _first_run(project, gate, found, repos) -> int:
    """Run the gate once: a pass turns the hook on, a failure keeps it off with the
    verdict beside it (and fails init when --model/--batch asked for it)."""
    verdict = gate_setup.run_once(project.root)
    if gate.step is not None:
        verdict = _without_a_failing_step(project, gate.step, verdict)
    first = verdict
    verdict = longer_budget.retry_with_more_steps(project, verdict)
    if verdict.passed:
        calibrate.calibrate_max_steps(
            project, verdict.steps, verdict.seconds, needed=not first.passed
        )
    name = project.name(project.config)
    if standard.GATE_HOOK in wiring.hook_ids(project.config.text, name):
        state = "passed" if verdict.passed else f"did not pass ({verdict.reason})"
        print(f"mlsmoke init: the gate {state}; overfit-batch was already on")
        if verdict.passed:
            expectations_setup.offer(project, repos)
            ddp_setup.offer(project, repos)
        return EXIT_FAILED if gate.explicit and not verdict.passed else EXIT_OK
    if verdict.passed:
        project.config.text = wiring.turn_gate_on(project.config.text, name, repos)
        print("mlsmoke init: the gate passed; overfit-batch is on")
    else:
        todo = [
            *(gate.module.todo if gate.module else []),
            *(gate.script.proposal.notes if gate.script else []),
        ]
        reason = textwrap.wrap(f"Off: its first run failed: {verdict.reason}", 76)
        reason += _todo_lines(todo)
        comment = wiring.gate_comment(found, reason, configured=True)
        project.config.text = wiring.replace_gate_comment(project.config.text, comment)
        print(
            f"mlsmoke init: the gate did not pass ({verdict.reason.split(':')[0]}); "
            "overfit-batch stays commented out in .pre-commit-config.yaml",
            file=sys.stderr,
        )
    write_all([project.config])
    if verdict.passed:
        expectations_setup.offer(project, repos)
        ddp_setup.offer(project, repos)
    return EXIT_FAILED if gate.explicit and not verdict.passed else EXIT_OK


def _without_a_failing_step(
    project: Project, step: str, verdict: gate_setup.Verdict
) -> gate_setup.Verdict:
    """The verdict with ``step`` kept if the gate passed with it; else ``step`` comes
    out of pyproject.toml and the gate runs again, as it would have without it."""
    if verdict.passed:
        print(f'mlsmoke init: the gate passed with step = "{step}"; it is kept')
        return verdict
    print(
        f'mlsmoke init: the gate did not pass with step = "{step}"'
        f" ({verdict.reason.split(':')[0]}); it is left out (set it in"
        f" [{gate_setup.TABLE}] once the gate passes with it), and the gate runs"
        " again without it",
        file=sys.stderr,
    )
    gate_setup.drop_step(project)
    write_all([project.pyproject])
    return gate_setup.run_once(project.root)


def _source_notes(source: HookSource) -> list[str]:
    notes = [f"mlsmoke's hooks: {source.repo} at {source.rev} ({source.why})"]
    if source.is_path and uncommitted(Path(source.repo)):
        notes.append(
            f"{source.repo} has uncommitted changes: the hooks run {source.rev[:12]}"
        )
    return notes


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


def _finish(
    project: Project, args: argparse.Namespace, module: TextFile | None
) -> None:
    files = [*project.files(), *([module] if module is not None else [])]
    if not args.dry_run:
        write_all(files)
        if module is not None:
            tools.format_with_black(project.root, [project.name(module)])
        return
    for file in files:
        if file.changed:
            print(file.diff(project.root), end="")


def _summary(project, args, changed, gate, notes, debt, seconds: float) -> str:
    verb = "would write" if args.dry_run else "wrote"
    lines = [f"mlsmoke init: {project.root} ({seconds:.1f} s)"]
    if not changed:
        online, offline = offline_switch.form(
            project.config.text, project.name(project.config)
        )
        nothing = why_nothing(online, offline, args.offline, args.online, args.force)
    lines.append(f"  {verb}: {', '.join(changed) or nothing}")
    runs = " (runs once below)" if gate.run and not args.dry_run else ""
    lines.append(f"  gate: {gate.summary}{runs}")
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
