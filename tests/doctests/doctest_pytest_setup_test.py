"""The project's own doctest setup: pytest's option flags and config files,
pytest-doctestplus's module variables, and a seed before each docstring."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# (flag, expected output, what the example prints, passes under the flag)
FLAG_CASES = [
    ("ALLOW_UNICODE", "u'caf\\xe9'", "'café'", True),
    ("ALLOW_UNICODE", "[u'a', U'b']", "['a', 'b']", True),
    ("ALLOW_BYTES", "b'data'", "'data'", True),
    ("ALLOW_BYTES", "[b'x', B'y']", "['x', 'y']", True),
    ("NUMBER", "3.14", "3.14159", True),
    ("NUMBER", "3.14", "3.16", False),
    ("NUMBER", "[1.0, 2.50]", "[1.0004, 2.4961]", True),
    ("NUMBER", "1e-3", "0.0014", True),  # one digit at 1e-3: to the unit, 1e-3
    ("NUMBER", "1e-3", "0.0030", False),
    ("NUMBER", "2", "2.4", False),  # an integer is compared as text
]


@pytest.mark.parametrize(("flag", "want", "printed", "passes"), FLAG_CASES)
def test_pytests_flags_mean_what_they_mean_in_pytest(
    project: Path, write, doctest, flag: str, want: str, printed: str, passes: bool
) -> None:
    write({"example.py": f'"""\n>>> print({printed!r})\n{want}\n"""\n'})
    with (project / "pyproject.toml").open("a") as file:
        file.write(f'[tool.mlsmoke.doctest]\noptionflags = ["{flag}"]\n')
    code, _ = doctest("example.py")
    pytest_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--doctest-modules",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            f"doctest_optionflags={flag}",
            "example.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )
    assert (code == 0, pytest_run.returncode == 0) == (passes, passes)


def test_pytests_flags_work_as_inline_directives(write, doctest) -> None:
    write({"example.py": '">>> print(3.14159)  # doctest: +NUMBER\\n3.14"\n'})
    assert doctest("example.py") == (0, "")


NEEDS_NUMBER = {"example.py": '">>> print(3.14159)\\n3.14"\n'}
PYTEST_CONFIGS = {
    "pytest.ini": "[pytest]\ndoctest_optionflags = NUMBER ELLIPSIS\n",
    "pyproject.toml": '[project]\nname = "demo"\n[tool.pytest.ini_options]\n'
    'doctest_optionflags = ["NUMBER", "ELLIPSIS"]\n',
    "tox.ini": "[tox]\nenvlist = py\n[pytest]\ndoctest_optionflags = NUMBER\n",
    "setup.cfg": "[metadata]\nname = demo\n[tool:pytest]\n"
    "doctest_optionflags =\n    NUMBER\n    ELLIPSIS\n",
}


@pytest.mark.parametrize("config_file", sorted(PYTEST_CONFIGS))
def test_doctest_optionflags_are_read_from_each_pytest_config_file(
    project: Path, write, doctest, config_file: str
) -> None:
    write(NEEDS_NUMBER)
    assert doctest("example.py")[0] == 1  # without it, 3.14159 is not 3.14
    (project / config_file).write_text(PYTEST_CONFIGS[config_file])
    assert doctest("example.py") == (0, "")


def test_the_pytest_config_pytest_reads_first_is_the_one(
    project: Path, write, doctest
) -> None:
    write(NEEDS_NUMBER)
    (project / "setup.cfg").write_text(PYTEST_CONFIGS["setup.cfg"])
    (project / "pytest.ini").write_text(
        "[pytest]\naddopts = -q\n"
    )  # pytest's, no flags
    assert doctest("example.py")[0] == 1


def test_mlsmokes_own_optionflags_win_over_pytests(
    project: Path, write, doctest
) -> None:
    write(NEEDS_NUMBER)
    (project / "pytest.ini").write_text(PYTEST_CONFIGS["pytest.ini"])
    with (project / "pyproject.toml").open("a") as file:
        file.write('[tool.mlsmoke.doctest]\noptionflags = ["ELLIPSIS"]\n')
    assert doctest("example.py")[0] == 1


def test_an_unknown_flag_in_a_pytest_config_names_the_file(
    project: Path, write, doctest
) -> None:
    write(NEEDS_NUMBER)
    (project / "tox.ini").write_text("[pytest]\ndoctest_optionflags = NUMBR\n")
    code, output = doctest("example.py")
    assert code == 2
    assert "tox.ini [pytest] doctest_optionflags: unknown option flag 'NUMBR'" in output


DECLARED = '''\
    __doctest_skip__ = ["broken", "Model.*"]
    __doctest_requires__ = {("needs_*", "Plot.draw"): ["optional_dep_xyz>=1.0"],
                            "uses_json": ["json"]}


    def broken():
        """
        >>> broken()
        'never run'
        """


    class Model:
        def forward(self):
            """
            >>> 1 / 0
            """


    def needs_optional():
        """
        >>> import optional_dep_xyz
        """


    class Plot:
        def draw(self):
            """
            >>> import optional_dep_xyz
            """


    def uses_json():
        """
        >>> import json
        >>> json.dumps(1)
        '2'
        """
    '''


def test_doctest_skip_and_requires_work_with_wildcards(write, doctest) -> None:
    write({"declared.py": DECLARED})
    code, output = doctest("declared.py")
    assert code == 1  # uses_json's requirement is met, so it runs, and fails
    assert "in declared.uses_json" in output
    for skipped in ("declared.needs_optional", "declared.Plot.draw"):
        assert (
            f"in {skipped} skipped: needs optional_dep_xyz (__doctest_requires__),"
            " which is not installed" in output
        )
    assert "broken" not in output and "Model" not in output
    assert output.endswith("1 of 1 file failed: 1 of 2 examples failed, 2 skipped\n")


def test_doctest_skip_star_and_dot(write, doctest) -> None:
    write(
        {
            "everything.py": '__doctest_skip__ = ["*"]\ndef f():\n    ">>> 1/0"\n',
            "module_only.py": '">>> 1/0"\n__doctest_skip__ = ["."]\n'
            'def f():\n    ">>> 1 + 1\\n3"\n',
        }
    )
    code, output = doctest("everything.py", "module_only.py")
    assert code == 1
    assert "module_only.py:4: in module_only.f" in output
    assert "everything" not in output


UNSEEDED = '''\
    def first():
        """
        >>> import numpy, torch
        >>> torch.rand(2)
        tensor([0.4963, 0.7682])
        >>> numpy.random.randint(100)
        44
        """


    def second():
        """
        >>> import random, numpy, torch
        >>> torch.rand(2)
        tensor([0.4963, 0.7682])
        >>> numpy.random.randint(100)
        44
        >>> random.randint(0, 100)
        49
        """
    '''


def test_seed_makes_unseeded_random_examples_stable(
    project: Path, write, doctest
) -> None:
    write({"rand.py": UNSEEDED})
    code, output = doctest("rand.py")
    assert code == 1  # without a seed, torch.rand gives other numbers
    with (project / "pyproject.toml").open("a") as file:
        file.write("[tool.mlsmoke.doctest]\nseed = 0\n")
    assert doctest("rand.py", "--no-cache") == (0, "")
