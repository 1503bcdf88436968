"""How files are imported: once, never as ``__main__``, only if they have examples."""

from __future__ import annotations

from pathlib import Path

import pytest

MARKS_IMPORT = """\
import pathlib

with pathlib.Path(__file__).with_suffix(".imported").open("a") as marker:
    marker.write("x")
"""


def test_files_without_examples_are_not_imported(project: Path, write, doctest) -> None:
    write({"plain.py": MARKS_IMPORT + "raise SystemExit('imported')\n"})
    write({"notes.md": "# Notes\n\nNo examples here.\n"})
    assert doctest("plain.py", "notes.md") == (0, "")
    assert not (project / "plain.imported").exists()


def test_side_effects_at_import_happen_once_and_do_not_leak(
    project: Path, write, doctest
) -> None:
    write(
        {
            "pkg/__init__.py": "",
            "pkg/noisy.py": '">>> 1 + 1\\n2"\n' + MARKS_IMPORT + 'print("noise")\n',
            "pkg/user.py": '">>> noisy.marker.closed\\nTrue"\nfrom pkg import noisy\n',
        }
    )
    code, output = doctest("pkg/noisy.py", "pkg/user.py", "pkg/noisy.py")
    assert (code, output) == (0, "")
    assert (project / "pkg" / "noisy.imported").read_text() == "x"


def test_main_blocks_never_run(project: Path, write, doctest) -> None:
    write({"script.py": '''\
                """
                >>> __name__
                'script'
                """
                if __name__ == "__main__":
                    open("main-ran", "w").close()
                    raise SystemExit(3)
                '''})
    assert doctest("script.py") == (0, "")
    assert not (project / "main-ran").exists()


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def broken(:\n", "SyntaxError"),
        ("from .missing import thing\n", "ImportError"),  # no parent package
        ("import localpkg.typo\n", "No module named 'localpkg.typo'"),
        ("raise RuntimeError('config not found')\n", "RuntimeError: config not found"),
        ("import sys\nsys.exit(4)\n", "SystemExit: 4"),
    ],
)
def test_an_import_failure_is_a_failure_of_that_file(
    project: Path, write, doctest, source: str, error: str
) -> None:
    write(
        {
            "localpkg/__init__.py": "",
            "good.py": '">>> 1\\n1"\n',
            "bad.py": '">>> 1\\n1"\n' + source,
        }
    )
    code, output = doctest("good.py", "bad.py")
    assert code == 1
    assert output.startswith("bad.py: cannot import bad\n    ")
    assert error in output
    assert "mlsmoke/doctests" not in output  # no frame of the hook's own code
    assert output.endswith(
        "1 of 2 files failed: 0 of 1 examples failed, 1 file did not run\n"
    )


def test_a_file_name_that_is_no_module_name_still_runs(write, doctest) -> None:
    write({"bin/my-tool": '#!/usr/bin/env python\n">>> 1 + 1\\n3"\n'})
    code, output = doctest("bin/my-tool")
    assert code == 1
    assert output.startswith("bin/my-tool:2:")


def test_a_module_named_like_the_standard_library_still_runs(write, doctest) -> None:
    write(
        {
            "json.py": '">>> 1\\n2"\n',
            "pkg/__init__.py": "",
            "pkg/json.py": '">>> 1\\n1"\n',
        }
    )
    code, output = doctest("json.py", "pkg/json.py")
    assert code == 1
    assert output.startswith("json.py:1: in _mlsmoke_doctest_json\n    >>> 1\n")
    assert "1 of 2 files failed" in output


def test_excluded_files_are_skipped(project: Path, write, doctest) -> None:
    write({"legacy/old.py": '">>> 1\\n2"\n', "new.py": '">>> 1\\n1"\n'})
    with (project / "pyproject.toml").open("a") as file:
        file.write('[tool.mlsmoke.doctest]\nexclude = ["legacy"]\n')
    assert doctest("legacy/old.py", "new.py") == (0, "")


def test_an_object_that_breaks_doctests_finder_fails_only_its_file(
    write, doctest
) -> None:
    write(
        {
            "good.py": '">>> 1\\n1"\n',
            "proxy.py": '''\
                """
                >>> 1
                1
                """


                class Proxy:
                    def __getattr__(self, name):
                        raise RuntimeError(f"no attribute {name} before connect()")


                proxy = Proxy()
                ''',
        }
    )
    code, output = doctest("good.py", "proxy.py")
    assert code == 1
    assert output.startswith("proxy.py: cannot run the examples\n")
    assert "RuntimeError: no attribute __wrapped__ before connect()" in output


def test_a_document_that_is_not_utf8_fails_only_itself(
    project: Path, write, doctest
) -> None:
    (project / "latin1.md").write_bytes(b"```python\n>>> 'caf\xe9'\n```\n")
    write({"good.md": "```python\n>>> 1\n1\n```\n"})
    code, output = doctest("latin1.md", "good.md")
    assert code == 1
    assert output.startswith("latin1.md: cannot read the file\n    'utf-8' codec")


def test_the_runner_exits_without_running_the_projects_exit_handlers(
    project: Path, write, doctest
) -> None:
    # Left-behind threads and slow atexit handlers (loggers, trackers) would hang the
    # commit; the runner leaves once its report is written.
    write({"tracker.py": '''\
                """
                >>> 1
                1
                """
                import atexit
                import pathlib

                atexit.register(pathlib.Path("atexit-ran").touch)
                '''})
    assert doctest("tracker.py") == (0, "")
    assert not (project / "atexit-ran").exists()
