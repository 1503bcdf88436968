"""``mlsmoke new DIR``: scaffold a PyTorch project from mlsmoke's cookiecutter template.

The template ships inside the mlsmoke package (``mlsmoke/template``, copied there when a
wheel is built) and is also found in a source checkout (``templates/ml-project``), which
is what an editable install sees. cookiecutter is an optional extra (``template``);
without it this command says how to add it to this mlsmoke (``install_hint.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import mlsmoke
from mlsmoke.errors import EnvironmentProblem, UsageError
from mlsmoke.hook_source import UPSTREAM_URL, HookSource, find_hook_source
from mlsmoke.install_hint import install_hint
from mlsmoke.new_expectations import record_expectations
from mlsmoke.torch_source import local_torch_steps, torch_steps

TEMPLATE_DIRECTORY = "templates/ml-project"
_PACKAGE_DIR = Path(mlsmoke.__file__).resolve().parent
TEMPLATE_CANDIDATES = (
    _PACKAGE_DIR / "template",  # an installed wheel
    _PACKAGE_DIR.parents[1] / TEMPLATE_DIRECTORY,  # a checkout or an editable install
)


def find_template(candidates: Iterable[Path] = TEMPLATE_CANDIDATES) -> Path:
    """The first candidate directory holding a cookiecutter template."""
    candidates = list(candidates)
    for candidate in candidates:
        if (candidate / "cookiecutter.json").is_file():
            return candidate
    searched = ", ".join(str(path) for path in candidates)
    raise EnvironmentProblem(
        f"mlsmoke's project template is not installed (searched {searched}); "
        f"use it from the repository instead: cookiecutter {UPSTREAM_URL} "
        f"--directory {TEMPLATE_DIRECTORY} --checkout v{mlsmoke.__version__}"
    )


def parse_assignments(pairs: Sequence[str]) -> dict[str, str]:
    """The ``--set KEY=VALUE`` pairs as a dict; a pair without ``=`` is an error."""
    answers = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"--set {pair!r}: expected KEY=VALUE, e.g. package_name=net"
            )
        answers[key.strip()] = value
    return answers


def template_questions(template: Path) -> list[str]:
    """The questions of the template's cookiecutter.json (``_`` keys are settings)."""
    with (template / "cookiecutter.json").open(encoding="utf-8") as file:
        return [key for key in json.load(file) if not key.startswith("_")]


def check_questions(answers: Mapping[str, str], questions: Sequence[str]) -> None:
    """cookiecutter ignores an answer to no question; a misspelt --set must not be."""
    for key in answers:
        if key not in questions:
            raise UsageError(
                f"--set {key}=...: the template has no question {key!r}; "
                f"it asks: {', '.join(questions)}"
            )


def default_answers(project_dir: Path, answers: Mapping[str, str]) -> dict[str, str]:
    """Answers for cookiecutter: the slug is DIR's name; the name comes from it."""
    slug = project_dir.name
    if answers.get("project_slug", slug) != slug:
        raise UsageError(
            f"--set project_slug={answers['project_slug']}: the slug is the name of "
            f"DIR ({slug!r}); choose it there"
        )
    name = slug.replace("-", " ").replace("_", " ").title()
    return {"project_name": name, **answers, "project_slug": slug}


def check_destination(project_dir: Path) -> None:
    if project_dir.exists() and not project_dir.is_dir():
        raise UsageError(f"{project_dir}: already exists and is not a directory")
    if project_dir.is_dir() and any(project_dir.iterdir()):
        raise UsageError(f"{project_dir}: already exists and is not empty")
    if not project_dir.name:
        raise UsageError(f"{project_dir}: cannot name a project after this path")


def generate(
    template: Path, project_dir: Path, answers: Mapping[str, str], no_input: bool
) -> Path:
    """Run cookiecutter; returns the generated project's directory."""
    try:
        from cookiecutter.exceptions import CookiecutterException, FailedHookException
        from cookiecutter.main import cookiecutter
    except ImportError:
        raise EnvironmentProblem(
            "mlsmoke new needs cookiecutter, an optional extra: "
            + install_hint("template")
        ) from None
    # The pre-generation hook prints its own clear message; cookiecutter would log a
    # traceback on top of it through logging's last-resort handler.
    quiet = logging.NullHandler()
    logging.getLogger("cookiecutter").addHandler(quiet)
    try:
        with _private_tempdir():
            generated = cookiecutter(
                str(template),
                no_input=no_input,
                extra_context=dict(answers),
                output_dir=str(project_dir.parent),
                overwrite_if_exists=project_dir.is_dir(),
            )
    except FailedHookException:
        raise UsageError(
            "the template rejected these answers (see the errors above)"
        ) from None
    except CookiecutterException as error:
        raise UsageError(f"the template could not be generated: {error}") from None
    finally:
        logging.getLogger("cookiecutter").removeHandler(quiet)
    remove_bytecode(Path(generated))
    return Path(generated)


def remove_bytecode(project: Path) -> None:
    """Delete the ``__pycache__`` directories cookiecutter copied from the template:
    pip byte-compiles the template's ``.py`` files where a wheel installs it."""
    for cache in sorted(project.rglob("__pycache__"), reverse=True):
        if cache.is_dir() and not cache.is_symlink():
            shutil.rmtree(cache)
    for stray in project.rglob("*.py[co]"):
        stray.unlink()


@contextlib.contextmanager
def _private_tempdir() -> Iterator[None]:
    """Point ``tempfile`` at a directory of our own for the block, then remove it.

    cookiecutter renders each template hook, the user's answers included, to a
    ``NamedTemporaryFile(delete=False)`` that it never deletes; this way it goes with
    the directory, whether generation succeeds or fails.
    """
    saved = tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="mlsmoke-new-") as scratch:
        tempfile.tempdir = scratch
        try:
            yield
        finally:
            tempfile.tempdir = saved


def next_steps(
    project: Path,
    answers: Mapping[str, Any],
    source: HookSource | None = None,
    torch: Sequence[str] | None = None,
    notes: Sequence[str] = (),
    record: bool = False,
) -> str:
    """What to do next; ``torch``: the steps that make .venv and install torch
    (``torch_source.py``; online ones by default); ``notes``: what was done;
    ``record``: the suite is still the template's, to record once torch is in .venv."""
    version = str(answers.get("torch_version", "2.13.0"))
    hooks = [f"mlsmoke's hooks: {source.repo} at {source.rev}"] if source else []
    torch = torch if torch is not None else torch_steps(version, False, [], None)
    return "\n".join(
        [
            f"Created {project}",
            *hooks,
            *notes,
            "Next:",
            f"  cd {project}",
            *(f"  {step}" for step in torch),
            '  pip install -e ".[dev]" && pre-commit install',
            *(
                ["  mlsmoke expect --record   # expectations.json, with .venv's torch"]
                if record
                else []
            ),
            "  pytest && git add -A && git commit -m 'Start from mlsmoke new'",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mlsmoke new",
        description="Scaffold a PyTorch project whose every commit runs black, flake8, "
        "shellcheck, strict mode, doctests and the overfit-batch gate.",
    )
    parser.add_argument("dir", type=Path, help="the project directory to create")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="answer a template question, e.g. --set package_name=net (repeatable)",
    )
    add_hook_source_arguments(parser)
    parser.add_argument(
        "--no-input",
        action="store_true",
        help="take the defaults, do not ask (implied when stdin is not a terminal)",
    )
    args = parser.parse_args(argv)
    project_dir = args.dir.absolute()
    check_destination(project_dir)
    template = find_template()
    assignments = parse_assignments(args.set)
    check_questions(assignments, template_questions(template))
    answers = default_answers(project_dir, assignments)
    source = find_hook_source(args.hooks_repo, args.hooks_rev)
    answers.update(source_answers(source, args.offline))
    no_input = args.no_input or not sys.stdin.isatty()
    project = generate(template, project_dir, answers, no_input)
    recorded = record_expectations(project)
    version = str(answers.get("torch_version", "2.13.0"))
    torch = local_torch_steps(version, args.offline)
    print(
        next_steps(
            project, answers, source, torch, [recorded.message], not recorded.recorded
        )
    )
    return 0


def add_hook_source_arguments(parser: argparse.ArgumentParser) -> None:
    """--hooks-repo, --hooks-rev and --offline, as ``new`` and ``init`` take them."""
    parser.add_argument(
        "--hooks-repo",
        metavar="URL_OR_PATH",
        help="where pre-commit fetches mlsmoke's hooks (default: where this mlsmoke "
        "was installed from)",
    )
    parser.add_argument(
        "--hooks-rev", metavar="REV", help="the tag or commit of --hooks-repo"
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="hooks that need no GitHub: `repo: local` hooks installed from the "
        "package index, mlsmoke's from a local clone",
    )


def source_answers(source: HookSource, offline: bool) -> dict[str, str]:
    """The template's private answers for where mlsmoke's hooks come from."""
    answers = {"__mlsmoke_repo": source.repo, "__mlsmoke_rev": source.rev}
    if offline:
        if not source.is_path:
            raise UsageError(
                f"--offline: mlsmoke's hooks would come from {source.repo}, which "
                "needs the network; pass --hooks-repo PATH (a clone of mlsmoke)"
            )
        answers["offline_hooks"] = "yes"
    return answers


if __name__ == "__main__":
    raise SystemExit(main())
