"""``[tool.mlsmoke.doctest]``: defaults, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.doctests.settings import Settings, load_settings
from mlsmoke.interpreter import configured_python


def write_config(root: Path, toml: str) -> None:
    (root / "pyproject.toml").write_text(toml)


def test_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == Settings(
        ("ELLIPSIS", "NORMALIZE_WHITESPACE"), (), None
    )


def test_values_are_read(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        "[tool.mlsmoke.doctest]\n"
        'optionflags = ["ellipsis", "FAIL_FAST"]\n'
        'exclude = "docs/*"\n'
        'python = ".venv/bin/python"\n'
        "timeout = 5\n",
    )
    assert load_settings(tmp_path) == Settings(
        ("ELLIPSIS", "FAIL_FAST"), ("docs/*",), ".venv/bin/python", 5.0
    )


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            "optionflags = ['ELIPSIS']",
            "tool.mlsmoke.doctest.optionflags: unknown option flag 'ELIPSIS'",
        ),
        (
            "timeout = 0",
            "tool.mlsmoke.doctest.timeout: expected a finite number of seconds,"
            " above 0 and up to 86400 (a day), got 0",
        ),
        (
            "optionflags = 3",
            "tool.mlsmoke.doctest.optionflags: expected an array of strings",
        ),
        ("exclude = [1]", "tool.mlsmoke.doctest.exclude: expected an array of strings"),
        (
            "python = false",
            "tool.mlsmoke.doctest.python: expected a string, got a boolean",
        ),
        ("pythn = 'x'", "tool.mlsmoke.doctest.pythn: unknown key"),
    ],
)
def test_config_errors_name_the_key(
    project: Path, doctest, toml: str, message: str
) -> None:
    write_config(project, f"[tool.mlsmoke.doctest]\n{toml}\n")
    (project / "a.py").write_text('">>> 1\\n1"\n')
    code, output = doctest("a.py")
    assert code == 2
    assert output.startswith(f"mlsmoke doctest: {message}")


def test_the_hooks_python_wins_over_the_shared_one(tmp_path: Path) -> None:
    write_config(tmp_path, "[tool.mlsmoke]\npython = 'shared'\n")
    assert configured_python(tmp_path, "doctest", None) == (
        "shared",
        "tool.mlsmoke.python",
    )
    assert configured_python(tmp_path, "doctest", "own") == (
        "own",
        "tool.mlsmoke.doctest.python",
    )
    write_config(tmp_path, "")
    assert configured_python(tmp_path, "doctest", None) is None


def test_a_configured_python_that_does_not_exist_names_the_key(
    project: Path, doctest
) -> None:
    write_config(project, "[tool.mlsmoke.doctest]\npython = 'env/bin/python'\n")
    (project / "a.py").write_text('">>> 1\\n1"\n')
    code, output = doctest("a.py")
    assert code == 2
    key = "tool.mlsmoke.doctest.python"
    assert output.startswith(f"mlsmoke doctest: {key}: 'env/bin/python' is not an")


def test_a_missing_file_is_a_usage_error(project: Path, doctest) -> None:
    assert doctest("nope.py") == (2, "mlsmoke doctest: nope.py: no such file\n")


def test_given_the_project_config_it_checks_the_table_and_runs_nothing(
    project: Path, doctest
) -> None:
    """pre-commit runs the hook on a commit that edits pyproject.toml alone; its
    ``>>>`` (a description that shows a prompt) is no example to run."""
    write_config(
        project,
        '[project]\nname = "demo"\ndescription = ">>> 1 + 1"\n'
        "[tool.mlsmoke.doctest]\ntimeout = 5\n",
    )
    assert doctest("pyproject.toml") == (0, "")
    write_config(project, "[tool.mlsmoke.doctest]\ntimout = 5\n")
    code, output = doctest("pyproject.toml")
    assert code == 2
    assert output.startswith(
        "mlsmoke doctest: tool.mlsmoke.doctest.timout: unknown key"
    )
