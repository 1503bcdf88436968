"""Which files hold examples, and the message when no interpreter imports what they
need: pure functions, plain values."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.doctests.selection import has_examples
from mlsmoke.interpreter import Candidate, Tried
from mlsmoke.interpreter_messages import not_found_message


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("m.py", b'"""\n>>> 1\n1\n"""\n', True),
        ("m.py", b'def f():\n    """\n    >>> f()\n    """\n', True),
        ("m.py", b"# >>> 1 + 1\nx = 1\n", False),  # a comment: pytest skips it too
        ("m.py", b'x = 1\nDATA = """\n>>> 1\n"""\n', False),  # not a docstring
        ("m.py", b'"""Prompt: # >>> here"""\n', False),
        ("m.py", b"def broken(:\n>>> 1\n", True),  # kept: the runner reports it
        ("m.py", b"x = 1\n", False),
        ("a.md", b"```python\n>>> 1\n1\n```\n", True),
        ("a.md", b">>> a nested quote\n", False),
        ("a.rst", b"   >>> 1\n   1\n", True),
        ("a.rst", b"see # >>> in prose\n", False),
    ],
)
def test_an_example_is_what_doctest_would_run(
    name: str, content: bytes, expected: bool
) -> None:
    assert has_examples(content, name) is expected


def _tried(path: str, origin: str, missing: list[str], has: list[str]) -> Tried:
    return Tried(Candidate(Path(path), origin, False), missing, has)


def test_the_message_says_what_each_interpreter_lacked_and_had() -> None:
    tried = [
        _tried("/usr/bin/python3", "PATH", ["numpy", "torch"], []),
        _tried(
            "/p/.venv/bin/python", ".venv/ in the project root", ["torch"], ["numpy"]
        ),
    ]
    message = not_found_message(["numpy", "torch"], tried, {"torch": "model.py"})
    lines = message.splitlines()
    assert lines[0] == "no Python interpreter of the project can import torch."
    assert lines[1] == (
        "  tried /usr/bin/python3 (PATH): cannot import numpy, torch (needed by"
        " model.py)"
    )
    assert lines[2] == (
        "  tried /p/.venv/bin/python (.venv/ in the project root): cannot import"
        " torch (needed by model.py); imports numpy"
    )
    assert "numpy is needed" not in message
    assert "create .venv" not in message
    assert "Install what it lacks into .venv" in message


def test_without_a_venv_tried_the_message_says_to_create_one() -> None:
    tried = [_tried("/usr/bin/python3", "PATH", ["torch"], [])]
    assert "create .venv in the project root" in not_found_message(["torch"], tried)
