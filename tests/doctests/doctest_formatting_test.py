"""The text of a failure: ``path:line:``, source, expected and got, or a diff."""

from __future__ import annotations

import pytest

from mlsmoke.doctests.formatting import format_failure, format_results, summary
from mlsmoke.doctests.results import ExampleFailure, FileFailure, FileResult


def failure(want: str, got: str, raised: bool = False) -> ExampleFailure:
    return ExampleFailure(7, "pkg.mod.f", "f(\n    1)\n", want, got, raised)


@pytest.mark.parametrize(
    ("want", "got", "raised", "body"),
    [
        ("1\n", "2\n", False, "expected:\n    1\ngot:\n    2"),
        ("", "2\n", False, "expected no output\ngot:\n    2"),
        ("1\n", "", False, "expected:\n    1\ngot no output"),
        (
            "1\n",
            "Traceback:\nKeyError: 1\n",
            True,
            "raised:\n    Traceback:\n    KeyError",
        ),
        (
            "".join(f"{n}\n" for n in range(7)),
            "".join(f"{n}\n" for n in range(7) if n != 3),
            False,
            "differences (-expected +got):\n    --- expected\n    +++ got\n",
        ),
    ],
)
def test_format_failure(want: str, got: str, raised: bool, body: str) -> None:
    text = format_failure("src/pkg/mod.py", failure(want, got, raised))
    assert text.startswith(
        "src/pkg/mod.py:7: in pkg.mod.f\n    >>> f(\n    ...     1)\n"
    )
    assert body in text


def test_six_lines_are_not_yet_a_diff() -> None:
    six = "".join(f"{n}\n" for n in range(6))
    assert "expected:" in format_failure("m.py", failure(six, six.replace("3", "x")))


def test_results_without_failures_print_nothing() -> None:
    assert format_results([FileResult("a.py", 3, [], None)]) == ""


def test_summary_counts_examples_and_files() -> None:
    results = [
        FileResult("a.py", 3, [failure("1", "2")], None),
        FileResult("b.py", 0, [], FileFailure("cannot import b", "SyntaxError", "")),
        FileResult("c.md", 4, [], None),
    ]
    assert summary(results) == (
        "doctest: 2 of 3 files failed: 1 of 7 examples failed, 1 file did not run"
    )


def test_summary_without_any_example_run_counts_only_files() -> None:
    broken = FileFailure("cannot import b", "SyntaxError", "")
    results = [FileResult("b.py", 0, [], broken)]
    assert summary(results) == "doctest: 1 of 1 file failed: 1 file did not run"
