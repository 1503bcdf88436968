"""The doctest hook through real pre-commit, in a project whose venv has a dependency
that the hook's own environment lacks."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

STATS = '''\
    """Statistics on top of a dependency only the project's venv has.

    >>> from tinydep import scale
    >>> mean([1, 2, 3])
    2.0
    """
    import tinydep

    from ._util import total


    def mean(values):
        """
        >>> mean([2, 4]) * tinydep.scale
        30.0
        """
        return total(values) / len(values)


    if __name__ == "__main__":
        raise SystemExit("the __main__ block ran")
    '''


def write_project(root: Path, hook_repo) -> None:
    files = {
        ".pre-commit-config.yaml": f"""\
            repos:
              - repo: {hook_repo.path}
                rev: {hook_repo.rev}
                hooks:
                  - id: doctest
            """,
        ".gitignore": ".venv/\n",
        "pyproject.toml": '[project]\nname = "stats"\n',
        "src/stats/__init__.py": "",
        "src/stats/_util.py": "def total(values):\n    return float(sum(values))\n",
        "src/stats/core.py": STATS,
        "README.md": """\
            # stats

            ```python
            >>> from stats.core import mean
            >>> mean([1.0, 2.0])
            1.5
            ```
            """,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


@pytest.mark.e2e
def test_doctest_hook_runs_in_the_projects_venv(
    tmp_path: Path, hook_repo, run_pre_commit, make_venv
) -> None:
    project = tmp_path / "stats"
    write_project(project, hook_repo)
    make_venv(project / ".venv", {"tinydep": "scale = 10\n"})
    for command in (["init", "--quiet"], ["add", "--all"]):
        subprocess.run(["git", *command], cwd=project, check=True)
    env = {"MLSMOKE_PYTHON": ""}

    passed = run_pre_commit(project, "run", "--all-files", env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "doctest" in passed.stdout and "Passed" in passed.stdout

    readme = project / "README.md"
    readme.write_text(readme.read_text().replace("1.5\n", "1.25\n"))
    failed = run_pre_commit(project, "run", "--files", "README.md", env=env)
    assert failed.returncode == 1, failed.stdout
    assert (
        "README.md:5:\n    >>> mean([1.0, 2.0])\nexpected:\n    1.25\ngot:\n    1.5\n"
        in (failed.stdout)
    )

    shutil.rmtree(project / ".venv")
    missing = run_pre_commit(project, "run", "--files", "src/stats/core.py", env=env)
    assert missing.returncode == 1  # pre-commit's own code for any failed hook
    assert "- exit code: 2" in missing.stdout
    assert "can import tinydep" in missing.stdout
    assert "ci: skip" in missing.stdout
