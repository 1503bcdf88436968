"""The lexer and parser: statements, their nesting, and reading a prefix of a file."""

from __future__ import annotations

import pytest

from mlsmoke.strict_mode.words import NeedMore
from mlsmoke.strict_mode.parser import Parser


def outline(source: str) -> list[tuple[int, str]]:
    """(depth, first word) of every statement, in order."""
    return [
        (statement.depth, statement.words[0].raw)
        for statement in Parser(source, at_eof=True).statements()
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("a; b && c || d | e &\n", [(0, "a"), (0, "b"), (0, "c"), (0, "d"), (0, "e")]),
        ("# a; b\nc # d\n", [(0, "c")]),
        ("echo 'a\n;b' \"c\n;d\" e\n", [(0, "echo")]),
        ("echo $'a\\'\n;b'\nc\n", [(0, "echo"), (0, "c")]),
        ("echo a\\\nb\nc\n", [(0, "echo"), (0, "c")]),
        ("cat <<EOF\nx; y\nEOF\nz\n", [(0, "cat"), (0, "z")]),
        ("cat <<-'E O'\n\tx\n\tE O\nz\n", [(0, "cat"), (0, "z")]),
        ("cat <<A <<B\na\nA\nb\nB\nz\n", [(0, "cat"), (0, "z")]),
        ("cat <<EOF | grep x\nbody\nEOF\nz\n", [(0, "cat"), (0, "grep"), (0, "z")]),
        ("x=$(cat <<EOF\n)\nEOF\n)\nz\n", [(0, "x=$(cat <<EOF\n)\nEOF\n)"), (0, "z")]),
        (
            "x=$(case a in a) b;; esac)\nz\n",
            [(0, "x=$(case a in a) b;; esac)"), (0, "z")],
        ),
        ("f() { a; }\n", [(0, "f"), (1, "{"), (2, "a")]),
        ("function f {\n a\n}\n", [(0, "f"), (1, "{"), (2, "a")]),
        ("function f() ( a )\n", [(0, "f"), (1, "("), (2, "a")]),
        (
            "if a; then b; elif c; then d; else e; fi; z\n",
            [(0, "if"), (1, "a"), (1, "b"), (1, "c"), (1, "d"), (1, "e"), (0, "z")],
        ),
        ("while a; do b; done >log; z\n", [(0, "while"), (1, "a"), (1, "b"), (0, "z")]),
        ("for x in do done; do b; done\n", [(0, "for"), (1, "b")]),
        ("for ((i=0; i<3; i++)); do b; done\n", [(0, "for"), (1, "b")]),
        (
            "case $x in\n (a|b) c ;;\n *) d ;&\nesac\nz\n",
            [(0, "case"), (1, "c"), (1, "d"), (0, "z")],
        ),
        ("[[ $a == (x|y) && $b < c ]] && z\n", [(0, "[["), (0, "z")]),
        ("(( i++ )) || z\n", [(0, "(( i++ ))"), (0, "z")]),
        ("{ a; } 2>&1 | b\n", [(0, "{"), (1, "a"), (0, "b")]),
        ("a=(x\n# )\ny) b\n", [(0, "a=(x\n# )\ny)")]),
        ("diff <(a) >(b)\nz\n", [(0, "diff"), (0, "z")]),
        ('echo ${x:-"}"} $((1 + (2))) `a \\` b`\nz\n', [(0, "echo"), (0, "z")]),
        ("shopt -s extglob\nls !(a|b)\nz\n", [(0, "shopt"), (0, "ls"), (0, "z")]),
        ("a\r\nb\r\n", [(0, "a"), (0, "b")]),
        ("! a | b\n", [(0, "a"), (0, "b")]),
    ],
)
def test_statements_and_their_depth(source: str, expected: list) -> None:
    assert outline(source) == expected


def test_flags_for_pipelines_background_and_conditions() -> None:
    statements = list(Parser("a && b | c\nd &\n", at_eof=True).statements())
    flags = [(s.words[0].raw, s.conditional, s.subshell) for s in statements]
    assert flags == [
        ("a", False, False),
        ("b", True, True),
        ("c", True, True),
        ("d", False, True),
    ]


def test_word_values_remove_quotes_and_mark_expansions() -> None:
    (statement,) = Parser("set '-e' \"u\"$'\\t' a$b\n", at_eof=True).statements()
    assert [word.value for word in statement.words] == ["set", "-e", "u\t", None]


@pytest.mark.parametrize(
    "prefix",
    ["set -e", "cat <<EOF\nset -e\n", "echo 'a\n", "x=$(a\n", "echo \\", "a\r"],
)
def test_a_prefix_that_ends_mid_token_asks_for_more(prefix: str) -> None:
    with pytest.raises(NeedMore):
        list(Parser(prefix + "    ", at_eof=False).statements())


def test_a_prefix_yields_the_statements_it_holds_completely() -> None:
    statements = Parser("a\nb\nc c c c c c c c", at_eof=False).statements()
    assert next(statements).words[0].raw == "a"
    assert next(statements).words[0].raw == "b"
    with pytest.raises(NeedMore):
        next(statements)
