"""``[tool.mlsmoke.strict-mode]`` in pyproject.toml, and which paths it excludes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mlsmoke.config import TOOL_PATH, Key, boolean, hook_table, string_list, validate
from mlsmoke.globs import glob_regex
from mlsmoke.strict_mode.checker import Policy

HOOK = "strict-mode"
SCHEMA = {
    "exclude": Key(string_list, [], "globs of paths to skip, relative to the project"),
    "require-ifs": Key(
        boolean, False, "also demand IFS=$'\\n\\t' before the first command"
    ),
    "require-pipefail-in-sh": Key(
        boolean, False, "demand pipefail in sh and dash scripts too"
    ),
}


@dataclass(frozen=True)
class Settings:
    policy: Policy
    exclude: tuple[str, ...] = ()


def load_settings(root: Path) -> Settings:
    values = validate(hook_table(root, HOOK), SCHEMA, f"{TOOL_PATH}.{HOOK}")
    policy = Policy(values["require-ifs"], values["require-pipefail-in-sh"])
    return Settings(policy, tuple(values["exclude"]))


def is_excluded(relative: PurePosixPath, globs: tuple[str, ...]) -> bool:
    """Whether a project-relative path matches one of the globs.

    A glob with a ``/`` (a leading one too, as in ``/run.sh``) matches the path from
    the project root (``**`` spans directories); one without matches the file's name
    or any directory's name.
    """
    for glob in globs:
        pattern = glob_regex(glob.strip("/"))
        if glob.startswith("/") or "/" in glob.strip("/"):
            prefixes = [
                "/".join(relative.parts[: n + 1]) for n in range(len(relative.parts))
            ]
            if any(pattern.fullmatch(prefix) for prefix in prefixes):
                return True
        elif any(pattern.fullmatch(part) for part in relative.parts):
            return True
    return False
