"""The README as a front door: every relative link of it and of docs/ resolves (file
and #anchor), every docs/ page is reachable from it, and every command of its first
screen runs, or, where it needs GitHub, is checked to be well-formed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gitrepo import GIT_IDENTITY, HookRepo, commit_all, init_git_repo
from markdown_doc import (
    SHELL_LANGUAGES,
    anchors,
    heading_slug,
    links,
    shell_commands,
    split_fences,
)
from packaging.requirements import InvalidRequirement, Requirement

from mlsmoke import __version__, config
from mlsmoke.doctests import settings as doctest_settings
from mlsmoke.expect import settings as expect_settings
from mlsmoke.new import UPSTREAM_URL
from mlsmoke.overfit.process import settings as overfit_settings
from mlsmoke.profile import settings as profile_settings
from mlsmoke.suites import settings as suites_settings
from mlsmoke.strict_mode import settings as strict_mode_settings

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FIRST_SCREEN_END = "<!-- first screen:"
FIRST_SCREEN_LINES = 70
README_LINES = 350
EXTRAS = set(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
)
SHELL_OPERATORS = re.compile(r"^(&&|\|\||\||;|>|>>|<|&)$|[;|&<>]$")
# The starts the first screen promises: program, first argument, and what the rest
# of the command holds.
PROMISED = {
    "an install from the git URL": ("pip", "install", f"@ git+{UPSTREAM_URL}"),
    "an install from a local clone": ("pip", "install", "./mlsmoke"),
    "pipx": ("pipx", "install", "mlsmoke"),
    "an existing repository": ("mlsmoke", "init", ""),
    "a new project": ("mlsmoke", "new", ""),
    "a clone": ("git", "clone", UPSTREAM_URL),
    "the demo": ("make", "demo", ""),
    "the tests": ("make", "test", ""),
}


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``page`` whose file or #anchor does not exist in
    ``root``."""
    broken = []
    for number, target in links(page.read_text()):
        if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(root)}:{number}: {target}"
        if not resolved.exists() or root not in (resolved, *resolved.parents):
            broken.append(f"{where}: no such file in the repository")
        elif anchor and resolved.suffix == ".md":
            if anchor not in anchors(resolved.read_text()):
                broken.append(f"{where}: no heading with that anchor")
    return broken


@pytest.mark.parametrize(
    "page", markdown_files(), ids=lambda page: str(page.relative_to(ROOT))
)
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## `[tool.x]` keys\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#toolx-keys) [self](#page) [web](https://x.invalid)\n"
        "[gone](missing.md) [bad](other.md#nope) [bad self](#nope) [a link\n"
        "over two lines](gone.md)\n"
        "```\n[in code](missing.md)\n```\n`[inline](missing.md)`\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md:4: missing.md: no such file in the repository",
        "page.md:4: other.md#nope: no heading with that anchor",
        "page.md:4: #nope: no heading with that anchor",
        "page.md:5: gone.md: no such file in the repository",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("`bash-strict-mode`", "bash-strict-mode"),
        ("The project's interpreter", "the-projects-interpreter"),
        ("`[tool.mlsmoke.strict-mode]`", "toolmlsmokestrict-mode"),
        (
            "doctest: mlsmoke doctest vs pytest --doctest-modules",
            "doctest-mlsmoke-doctest-vs-pytest---doctest-modules",
        ),
        ("The demo: `make demo`", "the-demo-make-demo"),
        ("[Linked](x.md) *heading*", "linked-heading"),
    ],
)
def test_anchors_are_made_as_github_makes_them(heading: str, anchor: str) -> None:
    assert heading_slug(heading) == anchor


def test_a_repeated_heading_gets_a_numbered_anchor() -> None:
    text = "# Notes\n## Speed\n```\n# not a heading\n```\n## Speed\n"
    assert anchors(text) == {"notes", "speed", "speed-1"}


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {
        (README.parent / target.partition("#")[0]).resolve()
        for _, target in links(README.read_text())
    }
    pages = sorted(DOCS.glob("*.md"))
    assert len(pages) >= 10
    assert [p.name for p in pages if p.resolve() not in linked] == []


def test_the_readme_is_a_front_door_and_the_reference_is_in_docs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= README_LINES, "move reference material to docs/"
    assert FIRST_SCREEN_END in text
    assert len(first_screen().splitlines()) <= FIRST_SCREEN_LINES


def table_headers(text: str) -> list[str]:
    lines = text.splitlines()
    return [h for h, rule in zip(lines, lines[1:]) if rule.startswith("| --- |")]


def test_each_benchmark_table_appears_once() -> None:
    """In docs/benchmarks.md, which ``python -m benchmarks.publish`` writes."""
    headers = table_headers((DOCS / "benchmarks.md").read_text())
    assert len(headers) >= 10
    elsewhere = [
        f"{page.relative_to(ROOT)}: {header}"
        for page in markdown_files()
        if page.name != "benchmarks.md" or page.parent != DOCS
        for header in table_headers(page.read_text())
        if header in headers
    ]
    assert elsewhere == []


CONFIGURATION_TABLES = {
    "tool.mlsmoke": config.TOOL_KEYS,
    "tool.mlsmoke.strict-mode": tuple(strict_mode_settings.SCHEMA),
    "tool.mlsmoke.doctest": tuple(doctest_settings.SCHEMA),
    "tool.mlsmoke.overfit": tuple(overfit_settings.GATE_SCHEMA),
    "tool.mlsmoke.profile": tuple(profile_settings.SCHEMA),
    "tool.mlsmoke.suites": (*suites_settings.SCHEMA, *suites_settings.HAND_SCHEMA),
    "tool.mlsmoke.expect": tuple(expect_settings.SCHEMA),
}


def configuration_sections() -> dict[str, str]:
    """docs/configuration.md's ``## `[table]` `` sections, by table name."""
    sections = re.split(r"^## ", (DOCS / "configuration.md").read_text(), flags=re.M)
    found = {}
    for section in sections[1:]:
        heading, _, body = section.partition("\n")
        table = re.fullmatch(r"`\[([\w.-]+)\]`", heading.strip())
        if table:
            found[table.group(1)] = body
    return found


@pytest.mark.parametrize("table", CONFIGURATION_TABLES)
def test_every_config_key_is_documented_under_its_table(table: str) -> None:
    section = configuration_sections()[table]
    keys = CONFIGURATION_TABLES[table]
    assert [key for key in keys if f"`{key}`" not in section] == []


# The first screen ------------------------------------------------------------------


def first_screen() -> str:
    return README.read_text().partition(FIRST_SCREEN_END)[0]


def first_screen_blocks() -> list[list[list[str]]]:
    _, blocks = split_fences(first_screen())
    return [shell_commands(b) for b in blocks if b.language in SHELL_LANGUAGES]


def test_the_first_screen_shows_every_start() -> None:
    commands = [c for block in first_screen_blocks() for c in block]
    missing = [
        start
        for start, (program, verb, rest) in PROMISED.items()
        if not any(
            c[:2] == [program, verb] and rest in " ".join(c[2:]) for c in commands
        )
    ]
    assert missing == [], commands


def test_first_screen_commands_are_one_per_line() -> None:
    for block in first_screen_blocks():
        for command in block:
            assert not [w for w in command if SHELL_OPERATORS.search(w)], command


def pip_spec_problems(spec: str) -> list[str]:
    """Why a pip requirement for mlsmoke from its git URL would not install it."""
    try:
        requirement = Requirement(spec)
    except InvalidRequirement as error:
        return [f"{spec}: {error}"]
    problems = []
    if requirement.name != "mlsmoke":
        problems.append(f"{spec}: installs {requirement.name}, not mlsmoke")
    if not requirement.extras <= EXTRAS:
        unknown = sorted(requirement.extras - EXTRAS)
        problems.append(f"{spec}: mlsmoke has no extra {', '.join(unknown)}")
    if requirement.url != f"git+{UPSTREAM_URL}":
        problems.append(f"{spec}: not mlsmoke's repository git+{UPSTREAM_URL}")
    return problems


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (f"mlsmoke[init] @ git+{UPSTREAM_URL}", None),
        (f"mlsmoke[inits] @ git+{UPSTREAM_URL}", "has no extra inits"),
        ("mlsmoke[init] @ git+https://github.com/other/mlsmoke", "not mlsmoke's"),
        (f"mlsmoke[init] git+{UPSTREAM_URL}", "Expected"),
        ("mlsmoke[init]", "not mlsmoke's repository"),
    ],
)
def test_a_git_url_install_is_checked(spec: str, problem: str | None) -> None:
    found = pip_spec_problems(spec)
    assert (found == []) if problem is None else (problem in " ".join(found))


class Session:
    """The first screen's commands, run in order as a newcomer would type them, in a
    git repository of one module (where ``mlsmoke init`` adopts the hooks)."""

    def __init__(self, tmp_path: Path, hook_repo: HookRepo) -> None:
        self.tmp_path = tmp_path
        self.hook_repo = hook_repo
        self.cwd = init_git_repo(tmp_path / "repo")
        (self.cwd / "tinyml.py").write_text(
            'def double(x):\n    """2x."""\n    return 2 * x\n'
        )
        commit_all(self.cwd, "a module")
        self.env = {
            **os.environ,
            **GIT_IDENTITY,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        }
        self.programs: dict[str, Callable[[list[str]], None]] = {
            "pip": self.pip,
            "pipx": self.pip,
            "mlsmoke": self.run_here,
            "pre-commit": self.run_here,
            "git": self.git,
            "cd": self.cd,
            "make": self.make,
        }

    def run(self, command: list[str]) -> None:
        program = self.programs.get(command[0])
        assert program, f"no way to check the first screen's `{' '.join(command)}`"
        program(command)

    def shell(self, argv: list[str], cwd: Path | None = None) -> str:
        completed = subprocess.run(
            argv, cwd=cwd or self.cwd, env=self.env, capture_output=True, text=True
        )
        assert completed.returncode == 0, (argv, completed.stdout, completed.stderr)
        return completed.stdout

    def run_here(self, command: list[str]) -> None:
        self.shell(command)

    def cd(self, command: list[str]) -> None:
        _, directory = command
        self.cwd = self.cwd / directory
        assert self.cwd.is_dir(), f"cd {directory}: no such directory"

    def git(self, command: list[str]) -> None:
        """``git clone`` of mlsmoke's URL: cloned from this checkout, as GitHub
        cannot be reached here."""
        assert command[1:3] == ["clone", UPSTREAM_URL], command
        directory = command[3] if len(command) > 3 else UPSTREAM_URL.rsplit("/", 1)[1]
        self.shell(["git", "clone", "--quiet", str(self.hook_repo.path), directory])

    def make(self, command: list[str]) -> None:
        """A make target of the clone, dry-run: the real ones take minutes."""
        _, target = command
        assert (self.cwd / "Makefile").is_file(), f"make {target}: not in a clone"
        assert self.shell(["make", "-n", target]).strip()

    def pip(self, command: list[str]) -> None:
        """A git URL is checked; a local path is installed into a throwaway venv."""
        installer, verb, spec = command
        assert verb == "install", command
        local = re.fullmatch(r"(\.{1,2}/[^\[\]]+)(?:\[([\w,-]+)\])?", spec)
        if local is None:
            assert pip_spec_problems(spec) == []
            return
        path, extras = Path(local.group(1)), set((local.group(2) or "").split(",")) - {
            ""
        }
        assert extras <= EXTRAS, f"{spec}: mlsmoke has no extra {extras - EXTRAS}"
        if not (self.cwd / path).exists():  # "from a clone in ./mlsmoke"
            self.shell(["git", "clone", "--quiet", str(self.hook_repo.path), str(path)])
        venv = self.tmp_path / f"{installer}-venv"
        self.shell([sys.executable, "-m", "venv", str(venv)])
        self.shell([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", spec])
        installed = self.shell([str(venv / "bin" / "mlsmoke"), "--version"])
        assert installed.strip() == __version__


@pytest.mark.e2e
@pytest.mark.parametrize(
    "block",
    first_screen_blocks(),
    ids=lambda block: "; ".join(" ".join(command[:2]) for command in block),
)
def test_every_first_screen_command_runs(
    block: list[list[str]], tmp_path: Path, hook_repo: HookRepo
) -> None:
    assert block, "a shell block without commands"
    session = Session(tmp_path, hook_repo)
    for command in block:
        session.run(command)
