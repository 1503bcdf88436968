"""The examples of Markdown, reStructuredText and plain-text documents."""

from __future__ import annotations

import pytest

from mlsmoke.doctests.documents import document_kind, markdown_example_text

FENCE_CASES = [
    # (markdown, the text doctest should parse)
    ("```python\n>>> 1\n1\n```\n", "\n>>> 1\n1\n\n"),
    ("```\n>>> 1\n1\n```\n", "\n>>> 1\n1\n\n"),
    ("~~~pycon\n>>> 1\n1\n~~~\n", "\n>>> 1\n1\n\n"),
    ("````python\n```\n>>> 1\n````\n", "\n```\n>>> 1\n\n"),  # longer fence
    ("```{.python .numberLines}\n>>> 1\n```\n", "\n>>> 1\n\n"),
    ("```console\n>>> 1\n2\n```\n", "\n\n\n\n"),  # not Python: not run
    ("```yaml\n>>> 1\n```\n```py\n>>> 2\n```\n", "\n\n\n\n>>> 2\n\n"),
    (">>> a nested block quote\n", "\n"),  # outside fences: prose
    ("- item\n\n  ```python\n  >>> 1\n  1\n  ```\n", "\n\n\n  >>> 1\n  1\n\n"),
    ("```python\n>>> 1\n1\n", "\n>>> 1\n1\n"),  # unclosed: runs to the end
    ("``` `inline` ```\n>>> 1\n", "\n\n"),  # inline code, not a fence
]


@pytest.mark.parametrize(("markdown", "expected"), FENCE_CASES)
def test_markdown_keeps_only_python_fences_and_line_numbers(
    markdown: str, expected: str
) -> None:
    kept = markdown_example_text(markdown)
    assert kept == expected
    assert len(kept.splitlines()) == len(markdown.splitlines())


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("README.md", "markdown"),
        ("docs/Guide.MARKDOWN", "markdown"),
        ("docs/index.rst", "text"),
        ("NOTES.txt", "text"),
        ("pkg/mod.py", "python"),
        ("bin/tool", "python"),
    ],
)
def test_document_kind(name: str, kind: str) -> None:
    assert document_kind(name) == kind


def test_a_closing_fence_right_after_output_is_not_output(write, doctest) -> None:
    write({"README.md": "# Demo\n\n```python\n>>> print('hi')\nhi\n```\nMore prose.\n"})
    assert doctest("README.md") == (0, "")


def test_markdown_examples_share_one_namespace_and_import_the_project(
    write, doctest
) -> None:
    write(
        {
            "src/mypkg/__init__.py": "def double(x):\n    return 2 * x\n",
            "README.md": """\
                # mypkg

                ```python
                >>> from mypkg import double
                ```

                Then:

                ```python
                >>> double(21)
                42
                >>> double(1)
                3
                ```
                """,
        }
    )
    code, output = doctest("README.md")
    assert code == 1
    assert output.startswith(
        "README.md:12:\n    >>> double(1)\nexpected:\n    3\ngot:\n    2\n"
    )


def test_restructuredtext_examples_run(write, doctest) -> None:
    write({"docs/usage.rst": """\
                Usage
                =====

                A literal block::

                    >>> sorted({3, 1, 2})
                    [1, 2, 3]

                .. doctest::

                    >>> len("abc")
                    4
                """})
    code, output = doctest("docs/usage.rst")
    assert code == 1
    assert output.startswith('docs/usage.rst:11:\n    >>> len("abc")\nexpected:\n')


def test_malformed_examples_are_a_failure_of_the_file(write, doctest) -> None:
    write({"notes.rst": ">>>print(1)\n1\n"})
    code, output = doctest("notes.rst")
    assert code == 1
    assert output.startswith("notes.rst: cannot parse the examples\n")
    assert "lacks blank after >>>" in output


@pytest.mark.parametrize("name", ["-x.txt", "--fix.txt", "-h.txt"])
def test_a_file_named_like_an_option_is_run(write, doctest, name: str) -> None:
    # pre-commit passes staged names without a `--` before them.
    write({name: ">>> 1 + 1\n3\n"})
    code, output = doctest(name)
    assert code == 1
    assert output.startswith(f"{name}:1:\n    >>> 1 + 1\nexpected:\n    3\n")
