"""Today's violations of each hook, found with the hooks' own tools.

Each check takes the project root and the files pre-commit would pass to the hook, and
returns the failing files with their codes (flake8 and shellcheck name theirs). Tools
run from mlsmoke's environment (its ``[init]`` extra brings them at the
template's versions); fixers run on copies, so the project is never touched.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.errors import EnvironmentProblem
from mlsmoke.install_hint import install_hint

Failures = dict[str, list[str]]
_CHUNK = 400


def require_module(module: str, tool: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise EnvironmentProblem(
            f"today's {tool} violations are measured with {tool} itself, "
            f"which is not installed here: {install_hint('init')}"
        )


def require_distributions(requirements: Sequence[str], tool: str) -> None:
    """The hook's additional_dependencies must be here, or their codes go unseen."""
    missing = []
    for requirement in requirements:
        name = re.split(r"[=<>!~\[ ;@]", requirement.strip(), maxsplit=1)[0]
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(requirement)
    if missing:
        wanted = " ".join(f"'{requirement}'" for requirement in missing)
        raise EnvironmentProblem(
            f"the {tool} hook installs {', '.join(missing)}, which mlsmoke init needs "
            f"to measure today's violations: pip install {wanted}"
        )


def _chunks(files: Sequence[str]) -> list[Sequence[str]]:
    return [files[i : i + _CHUNK] for i in range(0, len(files), _CHUNK)]


def _run(command: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=root, capture_output=True, text=True, errors="replace"
    )


def named_in_output(root: Path, files: Sequence[str], module: str) -> Failures:
    """Files a pre-commit-hooks check names in its output when it fails."""
    require_module("pre_commit_hooks", "pre-commit-hooks")
    failing: Failures = {}
    for chunk in _chunks(files):
        ran = _run([sys.executable, "-m", f"pre_commit_hooks.{module}", *chunk], root)
        if ran.returncode:
            output = ran.stdout + ran.stderr
            failing.update({path: [] for path in chunk if path in output})
    return failing


def changed_by_fixer(root: Path, files: Sequence[str], module: str) -> Failures:
    """Files a pre-commit-hooks fixer would change, fixed on copies."""
    require_module("pre_commit_hooks", "pre-commit-hooks")
    failing: Failures = {}
    with tempfile.TemporaryDirectory(prefix="mlsmoke-init-") as scratch:
        copies = Path(scratch)
        for path in files:
            (copies / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / path, copies / path)
        for chunk in _chunks(files):
            _run([sys.executable, "-m", f"pre_commit_hooks.{module}", *chunk], copies)
        for path in files:
            if (copies / path).read_bytes() != (root / path).read_bytes():
                failing[path] = []
    return failing


_REFORMAT = re.compile(r"^(?:would reformat|error: cannot format) (.+)$")


def black(root: Path, files: Sequence[str], own_force_exclude: str | None) -> Failures:
    """Files black would reformat (or cannot parse), its own excludes honoured."""
    require_module("black", "black")
    failing: Failures = {}
    force = ["--force-exclude", own_force_exclude or "^$"]
    for chunk in _chunks(files):
        ran = _run([sys.executable, "-m", "black", "--check", *force, *chunk], root)
        for line in ran.stderr.splitlines():
            match = _REFORMAT.match(line.strip())
            if match:
                failing[_file_named(_relative(match.group(1), root), chunk)] = []
    return failing


def _file_named(shown: str, files: Sequence[str]) -> str:
    """The file a black line names: ``error: cannot format`` goes on with ``: why``,
    and a file's name may hold a colon itself, so the longest name given that fits."""
    for name in sorted(files, key=len, reverse=True):
        if shown == name or shown.startswith(name + ":"):
            return name
    return shown.split(":", 1)[0]


def format_with_black(root: Path, files: Sequence[str]) -> None:
    require_module("black", "black")
    for chunk in _chunks(files):
        _run([sys.executable, "-m", "black", "--quiet", *chunk], root)


def flake8(root: Path, files: Sequence[str], overrides: Sequence[str]) -> Failures:
    """path -> sorted codes flake8 reports, under the config minus the baseline."""
    require_module("flake8", "flake8")
    failing: dict[str, set[str]] = {}
    line_format = "--format=%(path)s\x1f%(code)s"
    for chunk in _chunks(files):
        ran = _run(
            [sys.executable, "-m", "flake8", line_format, *overrides, *chunk], root
        )
        if ran.returncode not in (0, 1):
            raise EnvironmentProblem(f"flake8 could not run: {ran.stderr.strip()}")
        for line in ran.stdout.splitlines():
            path, _, code = line.partition("\x1f")
            if code:
                failing.setdefault(_relative(path, root), set()).add(code.strip())
    return {path: sorted(codes) for path, codes in failing.items()}


_SHELLCHECK = re.compile(r"^(.+?):\d+:\d+: \w+: .*\[(SC\d+)\]$")


def shellcheck(root: Path, files: Sequence[str]) -> Failures:
    program = shutil.which("shellcheck") or str(
        Path(sys.executable).with_name("shellcheck")
    )
    if not Path(program).exists():
        raise EnvironmentProblem(
            f"today's shellcheck findings are measured with shellcheck, "
            f"which is not installed here: {install_hint('init')}"
        )
    failing: dict[str, set[str]] = {}
    for chunk in _chunks(files):
        ran = _run([program, "-f", "gcc", *chunk], root)
        for line in ran.stdout.splitlines():
            match = _SHELLCHECK.match(line)
            if match:
                failing.setdefault(match.group(1), set()).add(match.group(2))
    return {path: sorted(codes) for path, codes in failing.items()}


def _relative(shown: str, root: Path) -> str:
    path = Path(shown)
    if path.is_absolute():
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            return path.as_posix()
    return path.as_posix().removeprefix("./")
