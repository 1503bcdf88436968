"""The docstring examples of Python files, imported under their real module names."""

from __future__ import annotations

import pytest

PASSING = '''\
    """Adds.

    >>> add(2, 2)
    4
    """


    def add(a, b):
        """
        >>> add(1, 2)
        3
        >>> [add(i, i) for i in range(30)]
        [0, 2, ..., 58]
        """
        return a + b
    '''


def test_passing_docstrings_exit_zero_silently(write, doctest) -> None:
    write({"calc.py": PASSING})
    assert doctest("calc.py") == (0, "")


def test_failing_example_shows_path_line_source_expected_and_got(
    write, doctest
) -> None:
    write({"calc.py": PASSING.replace("    3\n", "    4\n")})
    code, output = doctest("calc.py")
    assert code == 1
    assert output.startswith(
        "calc.py:10: in calc.add\n    >>> add(1, 2)\nexpected:\n    4\ngot:\n    3\n"
    )
    assert output.endswith("doctest: 1 of 1 file failed: 1 of 3 examples failed\n")


def test_unexpected_exception_is_shown_with_its_traceback(write, doctest) -> None:
    write({"calc.py": '"""\n>>> {}["key"]\n1\n"""\n'})
    code, output = doctest("calc.py")
    assert code == 1
    assert '    >>> {}["key"]\nexpected:\n    1\nraised:\n' in output
    assert "KeyError: 'key'" in output


def test_long_outputs_are_shown_as_a_unified_diff(write, doctest) -> None:
    expected = "\n".join(str(n) for n in range(10) if n != 7)
    write({"count.py": f'"""\n>>> for n in range(10): print(n)\n{expected}\n"""\n'})
    code, output = doctest("count.py")
    assert code == 1
    assert "differences (-expected +got):" in output
    assert "\n    +7\n" in output
    assert "\n     6\n" in output


@pytest.mark.parametrize(
    ("example", "passes"),
    [
        (">>> print('a   b')\na b", True),  # NORMALIZE_WHITESPACE by default
        (">>> list(range(9))\n[0, 1, ..., 8]", True),  # ELLIPSIS by default
        (">>> 1 / 0  # doctest: +SKIP\n5", True),
        (">>> print('a   b')  # doctest: -NORMALIZE_WHITESPACE\na b", False),
        (
            ">>> raise ValueError('boom')\nTraceback (most recent call last):\n"
            "ValueError: boom",
            True,
        ),
        (
            ">>> raise ValueError('x')\nTraceback (most recent call last):\n"
            "ValueError: y",
            False,
        ),
    ],
)
def test_option_flags_and_directives(write, doctest, example, passes) -> None:
    write({"flags.py": f'"""\n{example}\n"""\n'})
    code, _ = doctest("flags.py")
    assert code == (0 if passes else 1)


def test_configured_optionflags_replace_the_defaults(project, write, doctest) -> None:
    write({"flags.py": '"""\n>>> list(range(9))\n[0, 1, ..., 8]\n"""\n'})
    assert doctest("flags.py")[0] == 0
    with (project / "pyproject.toml").open("a") as file:
        file.write(
            '[tool.mlsmoke.doctest]\noptionflags = ["IGNORE_EXCEPTION_DETAIL"]\n'
        )
    assert doctest("flags.py")[0] == 1


PACKAGE = {
    "__init__.py": "from .core import DEFAULT as DEFAULT\n",
    "core.py": "DEFAULT = 3\n",
    "ops.py": '''\
        """
        >>> scale(2)
        6
        """
        from .core import DEFAULT


        def scale(x, by=DEFAULT):
            return x * by
        ''',
    "sub/__init__.py": "",
    "sub/deep.py": '''\
        """
        >>> from .. import DEFAULT
        >>> DEFAULT, __name__
        (3, 'mypkg.sub.deep')
        """
        ''',
}


@pytest.mark.parametrize(
    ("layout", "package_name"),
    [
        ("mypkg", "mypkg"),  # flat layout
        ("src/mypkg", "mypkg"),  # src layout
        ("lib/mypkg", "lib.mypkg"),  # lib/ is a namespace package
        ("tools/sub/mypkg", "mypkg"),  # a subproject with its own pyproject.toml
    ],
)
def test_modules_in_packages_import_under_their_real_names(
    write, doctest, layout: str, package_name: str
) -> None:
    write({f"{layout}/{name}": text for name, text in PACKAGE.items()})
    if layout.startswith("tools/"):
        write({"tools/sub/pyproject.toml": ""})
    deep = f"{layout}/sub/deep.py"
    write({deep: PACKAGE["sub/deep.py"].replace("'mypkg.", f"'{package_name}.")})
    assert doctest(f"{layout}/ops.py", deep) == (0, "")
