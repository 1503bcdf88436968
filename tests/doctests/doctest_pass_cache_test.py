"""The pass cache, with real runs: a prose edit is a hit that starts no interpreter;
a change to anything the examples ran is a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def two():\n    return 2\n",
    "pkg/a.py": '''\
        """Adds things.

        >>> add(two(), 1)
        3
        """
        from pkg.util import two


        def add(a, b):
            return a + b
        ''',
    "README.md": "# Demo\n\nSome prose.\n\n```python\n>>> from pkg.util import two\n"
    ">>> two()\n2\n```\n",
}


@pytest.fixture
def marked_python(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MLSMOKE_PYTHON is a wrapper that records each start of the interpreter."""
    import sys

    wrapper = project.parent / "python-wrapper"
    starts = project.parent / "starts"
    wrapper.write_text(
        f'#!/bin/sh\necho x >> "{starts}"\nexec "{sys.executable}" "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("MLSMOKE_PYTHON", str(wrapper))
    return starts


def _starts(starts: Path) -> int:
    return len(starts.read_text().splitlines()) if starts.exists() else 0


def test_a_pass_is_cached_and_a_prose_edit_is_a_hit(
    project: Path, write, doctest, marked_python: Path
) -> None:
    write(FILES)
    assert doctest("pkg/a.py", "README.md") == (0, "")
    ran = _starts(marked_python)
    assert doctest("pkg/a.py", "README.md") == (0, "")
    assert _starts(marked_python) == ran  # nothing started
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace("Some prose.", "Better prose."))
    module = project / "pkg/a.py"
    module.write_text(
        module.read_text().replace("Adds things.", "Adds two things.\n\n# a comment")
    )
    assert doctest("pkg/a.py", "README.md") == (0, "")
    assert _starts(marked_python) == ran


def test_a_change_to_an_imported_project_module_is_a_miss(
    project: Path, write, doctest, marked_python: Path
) -> None:
    write(FILES)
    assert doctest("pkg/a.py", "README.md") == (0, "")
    write({"pkg/util.py": "def two():\n    return 3\n"})
    code, output = doctest("pkg/a.py", "README.md")
    assert code == 1
    assert "pkg/a.py:3:" in output and "README.md:7:" in output


def test_an_edited_example_is_a_miss_and_failures_are_never_cached(
    project: Path, write, doctest
) -> None:
    write(FILES)
    assert doctest("README.md") == (0, "")
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace(">>> two()\n2", ">>> two()\n5"))
    assert doctest("README.md")[0] == 1
    assert doctest("README.md")[0] == 1  # still run: the failure was not stored


def test_no_cache_runs_everything(
    project: Path, write, doctest, marked_python: Path
) -> None:
    write(FILES)
    assert doctest("README.md") == (0, "")
    ran = _starts(marked_python)
    assert doctest("--no-cache", "README.md") == (0, "")
    assert _starts(marked_python) > ran


def test_a_garbled_entry_is_a_miss_and_an_unwritable_cache_runs_the_examples(
    project: Path, write, doctest, marked_python: Path
) -> None:
    write(FILES)
    assert doctest("README.md") == (0, "")
    entries = list((project / ".mlsmoke" / "doctest").glob("*.json"))
    assert len(entries) == 1
    entries[0].write_text('{"key": ')
    ran = _starts(marked_python)
    assert doctest("README.md") == (0, "")
    assert _starts(marked_python) > ran  # the garbled entry was not trusted
    json.loads(entries[0].read_text())  # and was rewritten whole
    blocked = project / ".mlsmoke" / "doctest"
    for entry in blocked.iterdir():
        entry.unlink()
    blocked.rmdir()
    blocked.write_text("not a directory")  # so no entry can be written there
    code, output = doctest("README.md")
    assert code == 0
    assert "doctest: the passes are not cached: " in output
    ran = _starts(marked_python)
    assert doctest("README.md")[0] == 0
    assert _starts(marked_python) > ran  # nothing stored: run again


FINGERPRINTED = '''\
"""Module prose.

>>> add(1, 2)
3
"""


def add(a, b):
    """Add two numbers.

    >>> add(2, 2)
    4
    """
    return a + b  # the sum
'''


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ("Module prose.", "Better module prose.\n\nMore of it.", True),
        ("Add two numbers.", "Add two numbers together.", True),
        ("# the sum", "# their sum", True),
        ("def add", "\n\ndef add", True),  # lines moved
        ("return a + b", "return a - b", False),
        (">>> add(2, 2)", ">>> add(2, 3)", False),
        ("    4\n", "    5\n", False),
        (">>> add(1, 2)", ">>> add(1, 2)  # doctest: +SKIP", False),
    ],
)
def test_the_fingerprint_leaves_out_prose_only(old: str, new: str, same: bool) -> None:
    from mlsmoke.doctests.requirements import parse_imports

    before = parse_imports(Path("m.py"), FINGERPRINTED).fingerprint
    after = parse_imports(Path("m.py"), FINGERPRINTED.replace(old, new, 1)).fingerprint
    assert (before == after) is same


DOCUMENT = """\
Intro prose.

>>> x = 1
>>> x + 1
2

More prose.

    >>> print("a")  # indented, with a tab-indented twin below
    a
\t>>> print("b")
\tb
"""


def _doctest_examples(text: str) -> list[tuple]:
    import doctest

    examples = doctest.DocTestParser().get_examples(text)
    return [(e.source, e.want, e.exc_msg, sorted(e.options.items())) for e in examples]


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ("Intro prose.", "Intro prose, longer.\n\nAnd a paragraph.", True),
        ("More prose.", "More prose,\nwrapped.", True),
        ("2\n\nMore", "2\n\n3\nMore", True),  # "3" is prose: a blank line before
        ("Intro prose.", "  Intro prose, indented.", True),
        ("2\n\nMore", "2\n3\n\nMore", False),  # a line of expected output
        (">>> x + 1\n2", ">>> x + 1\n\n2", False),  # the output became prose
        (">>> x + 1", ">>> x + 1  # doctest: +SKIP", False),
        (">>> x + 1", ">>> x + 1\n... + 0", False),
        ("\tb", "\tc", False),
        ("    a\n", "    a\n    Trailing.\n", False),  # expected output, to doctest
    ],
)
def test_a_documents_fingerprint_changes_with_its_examples_as_doctest_reads_them(
    old: str, new: str, same: bool
) -> None:
    """The fingerprint reads examples without doctest; it changes exactly when
    doctest's own parse of the examples does."""
    from mlsmoke.doctests.requirements import parse_imports

    edited = DOCUMENT.replace(old, new, 1)
    assert edited != DOCUMENT
    before = parse_imports(Path("README.rst"), DOCUMENT).fingerprint
    after = parse_imports(Path("README.rst"), edited).fingerprint
    assert (before == after) is same
    assert (_doctest_examples(DOCUMENT) == _doctest_examples(edited)) is same


RUN_MACHINERY = ("mlsmoke.doctests.supervise", "mlsmoke.warm.client")
# What neither a hit nor a prose edit needs: starting a process, dataclasses (and the
# inspect they import), an ini file's parser, doctest (a run's: pdb, unittest).
NOT_ON_A_HIT = (
    "subprocess",
    "dataclasses",
    "inspect",
    "configparser",
    "doctest",
)
_IMPORTED_BY_A_RUN = """\
import json, sys
from mlsmoke.cli import main
code = main(["doctest", *sys.argv[1:]])
print(json.dumps([code, sorted(sys.modules)]))
"""


def _imported(*files: str) -> tuple[int, list[str]]:
    import subprocess
    import sys

    argv = [sys.executable, "-c", _IMPORTED_BY_A_RUN, *files]
    answer = subprocess.run(argv, capture_output=True, text=True, check=True)
    return tuple(json.loads(answer.stdout.splitlines()[-1]))


def test_a_prose_edit_reads_no_config_and_imports_no_run_machinery(
    project: Path, write
) -> None:
    """Files without an example end the hook before it parses pyproject.toml or
    imports the interpreter search and the pass cache: what the prose commit pays.
    The config, when it is among the files, is still read and validated."""
    write({**FILES, "NOTES.md": "# Notes\n\nProse only, `a >>> b` inline.\n"})
    (project / "pyproject.toml").write_text(
        '[tool.mlsmoke.doctest]\noptionflags = ["NO_SUCH_FLAG"]\n'
    )
    code, modules = _imported("NOTES.md", "pkg/util.py")
    unread = {"tomllib", "mlsmoke.config", "mlsmoke.interpreter", "tempfile"}
    unread |= {*RUN_MACHINERY, *NOT_ON_A_HIT}
    assert code == 0 and not unread & set(modules)
    code, modules = _imported("NOTES.md", "pyproject.toml")
    assert code == 2 and "mlsmoke.config" in modules


def test_a_hit_imports_no_process_or_worker_machinery(
    project: Path, write, doctest
) -> None:
    """A prose commit pays only for the check: the modules that start the project's
    interpreter or reach the worker are imported by a run, not by a hit, and a hit
    imports none of the standard library's modules that only a run uses."""
    write(FILES)
    assert doctest("pkg/a.py", "README.md") == (0, "")
    code, hit = _imported("README.md")
    unneeded = {*RUN_MACHINERY, *NOT_ON_A_HIT, "tempfile"}  # nothing new to write
    assert code == 0 and not unneeded & set(hit)
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace("Some prose.", "Better prose."))
    code, hit = _imported("pkg/a.py", "README.md")  # the README's examples re-read
    assert code == 0 and not {*RUN_MACHINERY, *NOT_ON_A_HIT} & set(hit)
    readme.write_text(readme.read_text().replace("two()\n2", "two() + 1\n3"))
    code, ran = _imported("README.md")
    assert code == 0 and {*RUN_MACHINERY, "subprocess"} <= set(ran)
