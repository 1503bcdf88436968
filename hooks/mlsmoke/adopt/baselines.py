"""The baselines of a project, read from and written to each tool's own config.

| tool | where |
| flake8 | per-file-ignores of the flake8 config (.flake8, setup.cfg or tox.ini) |
| black | ``[tool.black] force-exclude`` (black honours it for files pre-commit names) |
| bash-strict-mode | ``[tool.mlsmoke.strict-mode] exclude`` |
| doctest | ``[tool.mlsmoke.doctest] exclude`` |
| other hooks | the hook's ``exclude:`` in .pre-commit-config.yaml |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.adopt import flake8_config, hook_baseline, marks, regexlist
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.standard import CONFIG
from mlsmoke.adopt.textfile import TextFile, read_text
from mlsmoke.doctests import settings as doctest_settings
from mlsmoke.errors import ConfigError
from mlsmoke.strict_mode import settings as strict_mode_settings

Failures = dict[str, list[str]]
Debt = dict[str, Failures]
STRICT_MODE, DOCTEST, BLACK, FLAKE8 = "bash-strict-mode", "doctest", "black", "flake8"
HOOK_EXCLUDE_TOOLS = (
    "trailing-whitespace",
    "end-of-file-fixer",
    "check-yaml",
    "check-toml",
    "detect-private-key",
    "debug-statements",
    "shellcheck",
)
TOML_ARRAYS = {STRICT_MODE: "tool.mlsmoke.strict-mode", DOCTEST: "tool.mlsmoke.doctest"}
BLACK_TABLE, BLACK_KEY = "tool.black", "force-exclude"


@dataclass
class Project:
    root: Path
    config: TextFile
    flake8: TextFile
    pyproject: TextFile

    @classmethod
    def load(cls, root: Path) -> Project:
        """The project's files; ConfigError, with the hooks' own message, for a
        pyproject.toml the hooks would reject (a baseline can only be edited in a
        file they accept)."""
        project = cls(
            root,
            read_text(root / CONFIG),
            read_text(flake8_config.find_config(root)),
            read_text(root / "pyproject.toml"),
        )
        strict_mode_settings.load_settings(root)
        doctest_settings.load_settings(root)
        return project

    def files(self) -> list[TextFile]:
        return [self.config, self.flake8, self.pyproject]

    def name(self, file: TextFile) -> str:
        return file.path.relative_to(self.root).as_posix()

    # What the user configured themselves, which measurements keep honouring.
    def own_exclude(self, tool: str) -> list[str]:
        return toml.split_array(self.pyproject.text, TOML_ARRAYS[tool], "exclude")[0]

    def own_force_exclude(self) -> str | None:
        found = toml.key_span(self.pyproject.text, BLACK_TABLE, BLACK_KEY)
        if found is None or found[0] != found[1]:
            return None
        data = toml.parse(self.pyproject.text, self.name(self.pyproject))
        value = toml.lookup(data, f"{BLACK_TABLE}.{BLACK_KEY}")
        return value if isinstance(value, str) else None

    def own_per_file_ignores(self) -> list[str]:
        return flake8_config.split_per_file(self.flake8.text)[0]

    def read(self) -> Debt:
        """Every baseline: tool -> path -> codes (empty tools left out)."""
        debt: Debt = {}
        baseline = flake8_config.split_per_file(self.flake8.text, self.root)[1]
        debt[FLAKE8] = baseline
        debt[BLACK] = {path: [] for path in self._black_paths()}
        for tool, table in TOML_ARRAYS.items():
            entries = toml.split_array(self.pyproject.text, table, "exclude")[1]
            debt[tool] = {_from_glob(tool, entry): [] for entry in entries}
        if self.config.text.strip():
            for tool in HOOK_EXCLUDE_TOOLS:
                name = self.name(self.config)
                paths = hook_baseline.read(self.config.text, name, tool) or []
                debt[tool] = {path: [] for path in paths}
        return {tool: failures for tool, failures in debt.items() if failures}

    def _black_paths(self) -> list[str]:
        found = toml.key_span(self.pyproject.text, BLACK_TABLE, BLACK_KEY)
        if found is None or found[0] == found[1]:
            return []
        data = toml.parse(self.pyproject.text, self.name(self.pyproject))
        return regexlist.from_regex(
            str(toml.lookup(data, f"{BLACK_TABLE}.{BLACK_KEY}")), "/"
        )

    def write(self, tool: str, failures: Failures) -> None:
        """Make ``tool``'s baseline hold exactly ``failures`` (in memory)."""
        if tool == FLAKE8:
            self.flake8.text = flake8_config.write_baseline(self.flake8.text, failures)
        elif tool == BLACK:
            self._write_black(sorted(failures))
        elif tool in TOML_ARRAYS:
            table = TOML_ARRAYS[tool]
            own = toml.split_array(self.pyproject.text, table, "exclude")[0]
            globs = [_to_glob(tool, path) for path in failures]
            what = f"files that failed {tool}"
            block = toml.array_block("exclude", own, globs, what)
            name = self.name(self.pyproject)
            self.pyproject.text = toml.set_key(
                self.pyproject.text, name, table, "exclude", block
            )
        else:
            name = self.name(self.config)
            self.config.text = hook_baseline.write(
                self.config.text, name, tool, sorted(failures)
            )

    def _write_black(self, paths: list[str]) -> None:
        name = self.name(self.pyproject)
        if paths and self.own_force_exclude() is not None:
            raise ConfigError(
                f"{name}: [tool.black] has its own force-exclude; mlsmoke init cannot "
                "baseline black there: run it with --format instead"
            )
        block: list[str] = []
        if paths:
            block += marks.comment("files black would reformat")
            block += [f"{BLACK_KEY} = '''", *regexlist.to_regex(paths, "/"), "'''"]
        self.pyproject.text = toml.set_key(
            self.pyproject.text, name, BLACK_TABLE, BLACK_KEY, block
        )


def _to_glob(tool: str, path: str) -> str:
    if tool == STRICT_MODE:
        return "/" + path  # anchored at the project root
    return re.sub(r"([*?[])", r"[\1]", path)


def _from_glob(tool: str, glob: str) -> str:
    if tool == STRICT_MODE:
        return glob.removeprefix("/")
    return re.sub(r"\[([*?[])\]", r"\1", glob)
