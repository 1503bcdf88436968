"""Find the project's own Python interpreter, and run mlsmoke code inside it.

The hook environment that pre-commit builds for mlsmoke never contains torch or the
project's dependencies. The overfit gate and the doctest hook therefore run in the
project's interpreter, found in this order:

1. ``python`` in ``[tool.mlsmoke]`` (or a hook's own ``python`` key);
2. the ``MLSMOKE_PYTHON`` environment variable;
3. the first ``python`` on PATH outside the hook's own environment (pre-commit puts its
   environment first on PATH);
4. ``.venv`` or ``venv`` in the project root.

An explicit choice (1 or 2) is used as it is. Discovered candidates (3 and 4) are
probed, and the first that can import the required modules wins. mlsmoke itself need
not be installed there: :func:`mlsmoke.project_command.module_command` loads it from
this installation.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from mlsmoke.config import TOOL_PATH, string, tool_table
from mlsmoke.errors import ConfigError, EnvironmentProblem

ENV_VARIABLE = "MLSMOKE_PYTHON"
VENV_DIRS = (".venv", "venv")
_EXECUTABLES = ("python", "python3")

# importlib.metadata is imported only when needed: it alone can double the probe's time.
_PROBE = """\
import importlib.util, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        import importlib.metadata
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = ""
import os, site
path = [p for p in sys.path if os.path.isabs(p) and os.path.isdir(p)]
if site.ENABLE_USER_SITE:  # where a `pip install --user` would put what is missing
    path.append(site.getusersitepackages())
print(json.dumps({"found": found, "version": list(sys.version_info[:3]), "path": path}))
"""


class Interpreter(NamedTuple):
    """A Python interpreter, where it was found, and the probed modules' versions.

    ``passed_over`` stamps the import directories of the discovered candidates tried
    before it, which could not import the modules: while they are unchanged, the
    same search would choose this interpreter again (see :func:`still_passed_over`).
    """

    path: Path
    origin: str
    modules: Mapping[str, str]
    passed_over: Mapping[str, list[int] | None] = MappingProxyType({})


class Candidate(NamedTuple):
    path: Path
    origin: str
    explicit: bool


class Tried(NamedTuple):
    """A candidate that could not import every required module: what it lacked and
    which of them it had."""

    candidate: Candidate
    missing: list[str]
    has: list[str]


def candidate_interpreters(
    root: Path,
    configured: tuple[str, str] | None,
    environ: Mapping[str, str],
    hook_prefix: Path | None,
) -> list[Candidate]:
    """The interpreters to try, in order. ``configured`` is ``(value, key path)``."""
    if configured is not None:
        value, key = configured
        return [Candidate(_resolve_configured(root, value, key), key, True)]
    if environ.get(ENV_VARIABLE):
        path = _resolve_configured(root, environ[ENV_VARIABLE], ENV_VARIABLE)
        return [Candidate(path, ENV_VARIABLE, True)]
    found = [
        Candidate(path, "PATH", False)
        for path in _on_path(environ.get("PATH", ""), hook_prefix)
    ]
    for venv in VENV_DIRS:
        path = root / venv / "bin" / "python"
        if _is_executable(path):
            found.append(Candidate(path, f"{venv}/ in the project root", False))
    return _unique(found)


def find_project_interpreter(
    root: Path,
    requires: Sequence[str],
    configured: tuple[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    wanted: Sequence[str] = (),
    needed_by: Mapping[str, str] | None = None,
) -> Interpreter:
    """The project's interpreter that can import ``requires``, or EnvironmentProblem;
    of those, the first that can also import ``wanted``, when one can."""
    candidates = project_candidates(root, configured, environ)
    return first_that_imports(candidates, requires, wanted, needed_by)


def project_candidates(
    root: Path,
    configured: tuple[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Candidate]:
    """The interpreters :func:`find_project_interpreter` would try, found without
    starting any: cheap enough for a cache key."""
    environ = os.environ if environ is None else environ
    return candidate_interpreters(root, configured, environ, _hook_prefix())


def first_that_imports(
    candidates: Sequence[Candidate],
    requires: Sequence[str],
    wanted: Sequence[str] = (),
    needed_by: Mapping[str, str] | None = None,
) -> Interpreter:
    """The first of ``candidates`` that can import ``requires`` and ``wanted``, else
    the first that can import ``requires``; an explicit one is the only one tried.
    EnvironmentProblem when none can import ``requires``, naming what each lacked
    (and, from ``needed_by``, the file that needs it)."""
    tried: list[Tried] = []
    passed_over: dict[str, list[int] | None] = {}
    fallback: Interpreter | None = None
    for candidate in candidates:
        probe = _probe(candidate.path, [*requires, *wanted])
        found = probe.get("found", {})
        missing = [name for name in requires if name not in found]
        if not missing:
            chosen = Interpreter(candidate.path, candidate.origin, found, passed_over)
            if all(name in found for name in wanted):
                return chosen
            fallback = fallback or chosen
        has = [name for name in requires if name in found]
        tried.append(Tried(candidate, missing, has))
        passed_over = {**passed_over}
        passed_over.update((d, directory_stamp(d)) for d in probe.get("path", []))
        if candidate.explicit:
            break
    if fallback is not None:
        return fallback
    from mlsmoke.interpreter_messages import not_found_message

    raise EnvironmentProblem(not_found_message(requires, tried, needed_by or {}))


def candidate_identity(candidate: Candidate) -> list[str]:
    """What makes a candidate the same interpreter again: the path it was found at (a
    venv's python is a link to the base interpreter, yet another environment) and the
    executable that path leads to now."""
    path = os.path.abspath(candidate.path)
    return [path, os.path.realpath(path)]


def directory_stamp(directory: str) -> list[int] | None:
    """What changes when a package is installed in ``directory`` or removed from it;
    None when it does not exist."""
    try:
        stat = os.stat(directory)
    except OSError:
        return None
    return [stat.st_mtime_ns, stat.st_ino]


def still_passed_over(passed_over: Mapping[str, list[int] | None]) -> bool:
    """Whether nothing was installed where the candidates tried first import from."""
    return all(
        directory_stamp(directory) == (list(stamp) if stamp is not None else None)
        for directory, stamp in passed_over.items()
    )


def configured_python(
    root: Path, hook: str, hook_value: str | None
) -> tuple[str, str] | None:
    """The ``python`` chosen in pyproject.toml for ``hook``, as ``(value, key path)``.

    The hook's own key wins over ``[tool.mlsmoke].python``.
    """
    if hook_value is not None:
        return hook_value, f"{TOOL_PATH}.{hook}.python"
    value = tool_table(root).get("python")
    if value is None:
        return None
    return string(value, f"{TOOL_PATH}.python"), f"{TOOL_PATH}.python"


def probe_modules(python: Path, modules: Sequence[str]) -> dict[str, str]:
    """Which of ``modules`` ``python`` can import, each with its installed version."""
    return _probe(python, modules).get("found", {})


def _probe(python: Path, modules: Sequence[str]) -> dict:
    """The probe's answer: ``found`` (module: version) and ``path`` (where ``python``
    imports from); empty when ``python`` does not run."""
    import subprocess  # here: a cache hit only finds candidates, it starts none

    try:
        completed = subprocess.run(
            [str(python), "-c", _PROBE, *modules],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        answer = json.loads(completed.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    return answer if isinstance(answer, dict) else {}


def _resolve_configured(root: Path, value: str, key: str) -> Path:
    path = Path(os.path.expanduser(value))
    if not path.is_absolute() and os.sep not in value:
        for directory in os.get_exec_path():
            if _is_executable(Path(directory) / value):
                return Path(directory) / value
    path = path if path.is_absolute() else root / path
    if _is_executable(path):
        return path
    raise ConfigError(f"{key}: {value!r} is not an executable Python interpreter")


def _on_path(path_variable: str, hook_prefix: Path | None) -> list[Path]:
    found = []
    for directory in filter(None, path_variable.split(os.pathsep)):
        if hook_prefix is not None and _is_inside(Path(directory), hook_prefix):
            continue
        for name in _EXECUTABLES:
            if _is_executable(Path(directory) / name):
                found.append(Path(directory) / name)
                break
    return found


def _hook_prefix() -> Path | None:
    """The virtual environment this process runs in, when it is one (the hook's)."""
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sys.prefix)


def _is_inside(path: Path, prefix: Path) -> bool:
    try:
        return path.resolve().is_relative_to(prefix.resolve())
    except OSError:
        return False


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    # Resolve the directory (/bin is often a link to /usr/bin) but not the file: a
    # venv's python is a symlink to the base interpreter, yet a different environment.
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        path = Path(os.path.abspath(candidate.path))
        key = os.path.join(os.path.realpath(path.parent), path.name)
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique
