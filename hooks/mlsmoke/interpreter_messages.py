"""What the user reads when no interpreter of the project can run a hook: every
interpreter tried, what each lacks and which file needs it, and how to point mlsmoke
at the project's environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mlsmoke.interpreter import ENV_VARIABLE, VENV_DIRS, Tried


def how_to_point_elsewhere(tried_venv: str | None = None) -> list[str]:
    """The lines telling users how to choose the project's interpreter; when the
    project's own venv was tried, how to complete it instead of creating one."""
    if tried_venv is not None:
        first = [
            f"Install what it lacks into {tried_venv} (its python was tried above),",
            "or point mlsmoke at another environment: set `python` in [tool.mlsmoke]",
            f"of pyproject.toml, or set {ENV_VARIABLE}.",
        ]
    else:
        first = [
            "Point mlsmoke at the project's environment: set `python` in "
            "[tool.mlsmoke]",
            f"of pyproject.toml, set {ENV_VARIABLE}, or create .venv in the project "
            "root.",
        ]
    return first + [
        "On pre-commit.ci, which has no project environment, list this hook under",
        "`ci: skip` and run it in your CI workflow instead.",
    ]


def not_found_message(
    requires: Sequence[str],
    tried: Sequence[Tried],
    needed_by: Mapping[str, str] | None = None,
) -> str:
    """Names what no interpreter has; when each lacks something else, says so. Every
    interpreter tried is listed with all it lacks (and the file needing each, from
    ``needed_by``) and what of ``requires`` it has, so a module one of them has is
    never reported as simply missing."""
    needed_by = needed_by or {}
    lacked_by_all = [name for name in requires if all(name in t.missing for t in tried)]
    if lacked_by_all or not tried:
        lines = [
            "no Python interpreter of the project can import"
            f" {', '.join(lacked_by_all or requires)}."
        ]
    else:
        lines = [
            "no Python interpreter of the project can import all of"
            f" {', '.join(requires)}; each lacks one."
        ]
    lines += [_tried_line(t, needed_by) for t in tried]
    lines += [] if tried else ["  no interpreter was found"]
    venvs = [t.candidate for t in tried if t.candidate.origin in _VENV_ORIGINS]
    tried_venv = venvs[0].path.parent.parent.name if venvs else None
    return "\n".join(lines + how_to_point_elsewhere(tried_venv))


_VENV_ORIGINS = tuple(f"{venv}/ in the project root" for venv in VENV_DIRS)


def _tried_line(tried: Tried, needed_by: Mapping[str, str]) -> str:
    lacks = ", ".join(
        f"{name} (needed by {needed_by[name]})" if name in needed_by else name
        for name in tried.missing
    )
    line = f"  tried {tried.candidate.path} ({tried.candidate.origin}):"
    line += f" cannot import {lacks}"
    return line + (f"; imports {', '.join(tried.has)}" if tried.has else "")
