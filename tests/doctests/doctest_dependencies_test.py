"""The scan needs only what the named files need; a missing package skips an example."""

from __future__ import annotations

from pathlib import Path

import pytest

# The four files of a package whose __init__ imports a module with an optional
# dependency in one of its examples.
OPTIONAL_IN_ANOTHER_FILE = {
    "pkg/__init__.py": "from . import b\n",
    "pkg/b.py": '"""\n>>> import optional_dep_xyz\n"""\n',
    "pkg/util.py": "def two():\n    return 2\n",
    "pkg/a.py": '"""\n>>> two()\n2\n"""\nfrom pkg.util import two\n',
}


def test_an_optional_dependency_of_another_files_example_does_not_block(
    write, doctest
) -> None:
    write(OPTIONAL_IN_ANOTHER_FILE)
    assert doctest("pkg/a.py") == (0, "")


def test_the_same_holds_where_the_interpreter_is_discovered(
    project: Path, write, doctest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MLSMOKE_PYTHON")
    write(OPTIONAL_IN_ANOTHER_FILE)
    assert doctest("pkg/a.py") == (0, "")


NEEDS_MISSING = '''\
    def plot():
        """
        >>> import optional_dep_xyz
        >>> optional_dep_xyz.show()
        'shown'
        """


    def add(a, b):
        """
        >>> add(1, 2)
        4
        """
        return a + b
    '''


def test_a_named_files_example_needing_a_missing_package_is_skipped_naming_it(
    write, doctest
) -> None:
    write({"plots.py": NEEDS_MISSING})
    code, output = doctest("plots.py")
    assert code == 1  # the rest of the file ran: add's example fails
    assert "plots.py:11: in plots.add\n    >>> add(1, 2)" in output
    assert (
        "plots.py:3: in plots.plot skipped: needs optional_dep_xyz, which is not"
        " installed\n" in output
    )
    assert "optional_dep_xyz.show" not in output  # the rest of that docstring skipped
    assert output.endswith("1 of 1 file failed: 1 of 1 examples failed, 1 skipped\n")


def test_missing_dependency_fail_makes_the_skip_a_failure(
    project: Path, write, doctest
) -> None:
    write({"plots.py": NEEDS_MISSING})
    with (project / "pyproject.toml").open("a") as file:
        file.write('[tool.mlsmoke.doctest]\nmissing_dependency = "fail"\n')
    code, output = doctest("plots.py")
    assert code == 1
    assert "plots.py:3: in plots.plot\n    >>> import optional_dep_xyz" in output
    assert "No module named 'optional_dep_xyz'" in output
    assert "skipped" not in output


def test_a_module_level_dependency_of_an_imported_project_module_is_required(
    project: Path, write, doctest
) -> None:
    write(
        {
            "pkg/__init__.py": "",
            "pkg/io.py": "import optional_dep_xyz\n",
            "pkg/a.py": '">>> 1\\n1"\nfrom pkg import io\n',
        }
    )
    code, output = doctest("pkg/a.py")
    assert code == 2
    assert "cannot import optional_dep_xyz (needed by pkg/io.py)" in output


def test_the_import_graph_is_cached_by_content(project: Path, write, doctest) -> None:
    write(OPTIONAL_IN_ANOTHER_FILE)
    assert doctest("pkg/a.py") == (0, "")
    cached = project / ".mlsmoke" / "doctest-imports" / "imports.json"
    first = cached.read_text()
    assert doctest("pkg/a.py", "--no-cache") == (0, "")
    assert cached.read_text() == first  # nothing new parsed: not rewritten
    write({"pkg/util.py": "import optional_dep_xyz\ndef two():\n    return 2\n"})
    code, output = doctest("pkg/a.py", "--no-cache")
    assert code == 2  # the edited module's new import is seen
    assert "cannot import optional_dep_xyz (needed by pkg/util.py)" in output
    cached.write_text("{garbled")
    write({"pkg/util.py": "def two():\n    return 2\n"})
    assert doctest("pkg/a.py", "--no-cache") == (0, "")
