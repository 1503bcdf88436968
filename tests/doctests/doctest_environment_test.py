"""The project's interpreter: found where the dependencies are, or a clear exit 2."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

USES_TINYDEP = '''\
    """
    >>> from tinydep import answer
    >>> answer()
    42
    """
    import tinydep
    '''


@pytest.fixture
def outside_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No MLSMOKE_PYTHON, and only the base interpreter (without tinydep) on PATH."""
    monkeypatch.delenv("MLSMOKE_PYTHON")
    base = Path(getattr(sys, "_base_executable", sys.executable)).parent
    monkeypatch.setenv("PATH", f"{base}{os.pathsep}/usr/bin{os.pathsep}/bin")


def test_the_project_venv_with_the_dependency_is_found(
    project: Path, write, doctest, outside_path: None, make_venv
) -> None:
    make_venv(project / ".venv", {"tinydep": "def answer():\n    return 42\n"})
    write({"uses.py": USES_TINYDEP})
    assert doctest("uses.py") == (0, "")


def test_no_interpreter_with_the_dependency_exits_2_naming_it(
    project: Path, write, doctest, outside_path: None
) -> None:
    write({"uses.py": USES_TINYDEP})
    code, output = doctest("uses.py")
    assert code == 2
    assert output.startswith(
        "mlsmoke doctest: no Python interpreter of the project can import tinydep.\n"
        "  tried "
    )
    assert "cannot import tinydep (needed by uses.py)" in output
    assert "MLSMOKE_PYTHON" in output and "ci: skip" in output


HIDDEN_IMPORT = {
    "pkg/__init__.py": "",
    # imported where the hook's reading of the source does not look
    "pkg/io.py": "if True:\n    import tinydep\n",
    "pkg/model.py": '">>> io.tinydep.answer\\n42"\nfrom pkg import io\n',
}


def test_a_dependency_found_missing_at_run_time_is_searched_for(
    project: Path, write, doctest, outside_path: None, make_venv
) -> None:
    make_venv(project / ".venv", {"tinydep": "answer = 42\n"})
    write(HIDDEN_IMPORT)
    assert doctest("pkg/model.py") == (0, "")


def test_a_dependency_no_interpreter_has_exits_2_naming_the_interpreter(
    write, doctest
) -> None:
    write(HIDDEN_IMPORT)
    code, output = doctest("pkg/model.py")
    assert code == 2
    assert output == (
        "mlsmoke doctest: no Python interpreter of the project can import tinydep.\n"
        f"  tried {sys.executable} (MLSMOKE_PYTHON):"
        " cannot import tinydep (needed by pkg/model.py)\n"
        "Point mlsmoke at the project's environment: set `python` in [tool.mlsmoke]\n"
        "of pyproject.toml, set MLSMOKE_PYTHON, or create .venv in the project root.\n"
        "On pre-commit.ci, which has no project environment, list this hook under\n"
        "`ci: skip` and run it in your CI workflow instead.\n"
    )


def test_a_module_that_ends_the_interpreter_fails_its_file_and_the_next_runs(
    write, doctest
) -> None:
    dies = 'import os\nprint("last words", flush=True)\nos._exit(9)\n'
    write({"dies.py": '">>> 1\\n1"\n' + dies, "after.py": '">>> 1 + 1\\n3"\n'})
    code, output = doctest("dies.py", "after.py")
    assert code == 1
    assert output.startswith(
        "dies.py: cannot import the module\n"
        "    the interpreter exited with code 9 while importing the module\n"
        "    its last output:\n"
        "      last words\n"
    )
    assert "after.py:1:" in output  # the file after it still ran
    assert output.endswith(
        "2 of 2 files failed: 1 of 1 examples failed, 1 file did not run\n"
    )


def test_an_interpreter_that_dies_before_any_file_exits_2_with_its_last_output(
    project: Path, write, doctest, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = project / "fake-python"
    fake.write_text("#!/bin/sh\necho last words\nexit 9\n")
    fake.chmod(0o755)
    monkeypatch.setenv("MLSMOKE_PYTHON", str(fake))
    write({"mod.py": '">>> 1\\n1"\n'})
    code, output = doctest("mod.py")
    assert code == 2
    assert "exited with code 9 before reporting on mod.py\n" in output
    assert "  last words" in output


def test_a_directory_linked_into_path_twice_is_tried_once(
    project: Path, write, doctest, outside_path: None, monkeypatch
) -> None:
    base = Path(getattr(sys, "_base_executable", sys.executable)).parent
    (project / "linked-bin").symlink_to(base)
    monkeypatch.setenv("PATH", f"{base}{os.pathsep}{project / 'linked-bin'}")
    write({"uses.py": USES_TINYDEP})
    code, output = doctest("uses.py")
    assert code == 2
    assert output.count("  tried ") == 1


def test_the_venv_is_chosen_when_only_an_examples_package_is_missing_from_it(
    project: Path, write, doctest, outside_path: None, make_venv
) -> None:
    """The .venv has the module-level dependency (numpy, say); an example also
    imports a package no interpreter has. Then the .venv runs the file and that
    example is skipped, instead of "no interpreter can import numpy"."""
    make_venv(project / ".venv", {"tinydep": "def answer():\n    return 42\n"})
    extra = 'def extra():\n    """\n    >>> import tinyextra\n    """\n'
    write({"uses.py": textwrap.dedent(USES_TINYDEP) + extra})
    code, output = doctest("uses.py")
    assert code == 0
    assert (
        "uses.py:9: in uses.extra skipped: needs tinyextra, which is not installed\n"
        in output
    )


def test_the_message_names_what_no_interpreter_has_not_what_the_venv_has(
    project: Path, write, doctest, outside_path: None, make_venv
) -> None:
    make_venv(project / ".venv", {"tinydep": "answer = 42\n"})
    write({"uses.py": textwrap.dedent(USES_TINYDEP) + "import tinyextra\n"})
    code, output = doctest("uses.py")
    assert code == 2
    assert output.startswith(
        "mlsmoke doctest: no Python interpreter of the project can import tinyextra.\n"
    )
    assert (
        "(PATH): cannot import tinydep (needed by uses.py),"
        " tinyextra (needed by uses.py)\n" in output
    )
    assert (
        "(.venv/ in the project root): cannot import tinyextra (needed by uses.py);"
        " imports tinydep\n" in output
    )
    # .venv was tried: the advice is to complete it, not to create it
    assert "create .venv" not in output
    assert "Install what it lacks into .venv" in output


def test_when_each_interpreter_lacks_another_module_each_is_named(
    project: Path, write, doctest, outside_path: None, make_venv, monkeypatch
) -> None:
    make_venv(project / ".venv", {"tinydep": "answer = 42\n"})
    other = make_venv(project.parent / "other", {"tinyextra": ""})
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}/usr/bin{os.pathsep}/bin")
    write({"uses.py": textwrap.dedent(USES_TINYDEP) + "import tinyextra\n"})
    code, output = doctest("uses.py")
    assert code == 2
    assert output.startswith(
        "mlsmoke doctest: no Python interpreter of the project can import all of"
        " tinydep, tinyextra; each lacks one.\n"
    )
    assert (
        f"tried {other} (PATH): cannot import tinydep (needed by uses.py);"
        " imports tinyextra\n" in output
    )
    assert (
        "(.venv/ in the project root): cannot import tinyextra (needed by uses.py);"
        " imports tinydep\n" in output
    )
