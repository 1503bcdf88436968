"""The statements of a shell script, in order, with how deeply each is nested.

A recursive-descent reader over the lexer's tokens: lists, ``&&``/``||``, pipelines,
simple commands, and the compound commands (``if``, ``while``, ``until``, ``for``,
``select``, ``case``, ``{ }``, ``( )``, ``[[ ]]``, ``(( ))``) and function definitions.
It yields statements lazily, so a caller that has its answer stops reading the file.
Statements inside ``$(...)`` are parsed (to find its closing parenthesis), not yielded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mlsmoke.strict_mode.lexer import Kind, Lexer, Token, Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
_STRAY_OPERATORS = frozenset({")", "|", "||", "&&", "|&"}) | _CASE_ENDS
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Statement:
    """One command of the script: simple, compound (by its keyword) or a definition."""

    kind: str  # "simple", "compound" or "function"
    words: tuple[Word, ...]
    start: int
    end: int
    depth: int  # 0 for the script's top level
    conditional: bool = False  # runs only as an earlier `&&` / `||` allows
    subshell: bool = False  # part of a pipeline, or sent to the background

    @property
    def command_words(self) -> tuple[Word, ...]:
        """The words after any leading ``NAME=value`` assignments."""
        for index, word in enumerate(self.words):
            if not _ASSIGNMENT.match(word.raw):
                return self.words[index:]
        return ()

    @property
    def assignments(self) -> tuple[Word, ...]:
        return self.words[: len(self.words) - len(self.command_words)]


class Parser:
    def __init__(self, text: str, at_eof: bool, start: int = 0) -> None:
        self.lexer = Lexer(text, at_eof, start, self._parse_substitution)
        self._peeked: Token | None = None

    def statements(self) -> Iterator[Statement]:
        yield from self._list(0, _NONE, _NONE)

    # -- tokens --

    def _peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self.lexer.next_token()
        return self._peeked

    def _advance(self) -> Token:
        token = self._peek()
        self._peeked = None
        return token

    def _at(self, kind: Kind, *texts: str) -> bool:
        token = self._peek()
        return token.kind is kind and (not texts or token.text in texts)

    def _take(self, kind: Kind, text: str) -> bool:
        if self._at(kind, text):
            self._advance()
            return True
        return False

    def _skip(self, kind: Kind, *texts: str) -> None:
        while self._at(kind, *texts):
            self._advance()

    def _skip_separators(self) -> None:
        while self._at(Kind.NEWLINE) or self._at(Kind.OPERATOR, ";"):
            self._advance()

    def _parse_substitution(self) -> None:
        """Consume a ``$(...)`` body up to its closing parenthesis."""
        outer, self._peeked = self._peeked, None
        for _ in self._list(1, _NONE, frozenset({")"})):
            pass
        self._take(Kind.OPERATOR, ")")
        self._peeked = outer

    # -- grammar --

    def _list(
        self, depth: int, stop_words: frozenset[str], stop_operators: frozenset[str]
    ) -> Iterator[Statement]:
        while True:
            token = self._peek()
            if token.kind is Kind.END:
                return
            if token.kind is Kind.OPERATOR and token.text in stop_operators:
                return
            if token.kind is Kind.WORD and token.text in stop_words:
                return
            if (
                token.kind is Kind.NEWLINE
                or token.kind is Kind.OPERATOR
                and (token.text in _STRAY_OPERATORS or token.text in (";", "&"))
            ):
                self._advance()  # a separator, or an operator out of place
                continue
            yield from self._and_or(depth)

    def _and_or(self, depth: int) -> Iterator[Statement]:
        conditional = False
        while True:
            yield from self._pipeline(depth, conditional)
            if not self._at(Kind.OPERATOR, "&&", "||"):
                return
            self._advance()
            self._skip(Kind.NEWLINE)
            conditional = True

    def _pipeline(self, depth: int, conditional: bool) -> Iterator[Statement]:
        after_pipe = False
        while True:
            while self._at(Kind.WORD, "!", "time"):
                if self._advance().text == "time":
                    self._take(Kind.WORD, "-p")
            yield from self._command(depth, conditional, after_pipe)
            if not self._at(Kind.OPERATOR, "|", "|&"):
                return
            self._advance()
            self._skip(Kind.NEWLINE)
            after_pipe = True

    def _command(
        self, depth: int, conditional: bool, after_pipe: bool
    ) -> Iterator[Statement]:
        token = self._peek()
        body = self._compound_body(token)
        if body is None:
            yield from self._simple(depth, conditional, after_pipe)
            return
        self._advance()
        keyword = token.word or Word(token.text, token.text, token.start, token.end)
        if token.text == "function":
            yield from self._function(depth, conditional)
            return
        yield Statement(
            "compound", (keyword,), token.start, token.end, depth, conditional
        )
        yield from body(depth + 1)
        self._skip(Kind.REDIRECT)

    def _compound_body(
        self, token: Token
    ) -> Callable[[int], Iterator[Statement]] | None:
        if token.kind is Kind.ARITHMETIC:
            return _nothing
        if token.kind is Kind.OPERATOR:
            return self._subshell if token.text == "(" else None
        if token.kind is not Kind.WORD:
            return None
        bodies = {
            "if": self._if,
            "while": self._loop,
            "until": self._loop,
            "for": self._for,
            "select": self._for,
            "case": self._case,
            "{": self._group,
            "[[": self._conditional,
            "function": _nothing,
        }
        return bodies.get(token.text)

    def _simple(
        self, depth: int, conditional: bool, after_pipe: bool
    ) -> Iterator[Statement]:
        words: list[Word] = []
        start = end = self._peek().start
        while True:
            token = self._peek()
            if token.kind is Kind.WORD:
                words.append(self._advance().word)  # type: ignore[arg-type]
            elif token.kind is Kind.REDIRECT:
                self._advance()
            elif self._at(Kind.OPERATOR, "(") and len(words) == 1:
                yield from self._function(depth, conditional, name=words[0])
                return
            else:
                break
            end = token.end
        if end == start:
            return
        subshell = after_pipe or self._at(Kind.OPERATOR, "|", "|&", "&")
        yield Statement(
            "simple", tuple(words), start, end, depth, conditional, subshell
        )

    def _function(
        self, depth: int, conditional: bool, name: Word | None = None
    ) -> Iterator[Statement]:
        """``name() body`` (``name`` already read) or ``function name [()] body``."""
        if name is None:
            token = self._advance()
            name = token.word or Word(token.text, None, token.start, token.end)
        if self._take(Kind.OPERATOR, "("):
            self._take(Kind.OPERATOR, ")")
        self._skip(Kind.NEWLINE)
        yield Statement("function", (name,), name.start, name.end, depth, conditional)
        yield from self._command(depth + 1, False, False)

    def _if(self, depth: int) -> Iterator[Statement]:
        while True:
            yield from self._list(
                depth, frozenset({"then", "elif", "else", "fi"}), _NONE
            )
            token = self._advance()
            if token.kind is not Kind.WORD or token.text == "fi":
                return

    def _loop(self, depth: int) -> Iterator[Statement]:
        yield from self._list(depth, frozenset({"do"}), _NONE)
        if self._take(Kind.WORD, "do"):
            yield from self._do_body(depth)

    def _do_body(self, depth: int) -> Iterator[Statement]:
        yield from self._list(depth, frozenset({"done"}), _NONE)
        self._take(Kind.WORD, "done")

    def _for(self, depth: int) -> Iterator[Statement]:
        self._advance()  # the variable, or ((init; test; step))
        self._skip_separators()
        if self._take(Kind.WORD, "in"):
            self._skip(Kind.WORD)
        self._skip_separators()
        if self._take(Kind.WORD, "do"):
            yield from self._do_body(depth)
        elif self._take(Kind.WORD, "{"):
            yield from self._group(depth)

    def _case(self, depth: int) -> Iterator[Statement]:
        self._advance()  # the subject
        self._skip(Kind.NEWLINE)
        self._take(Kind.WORD, "in")
        while True:
            self._skip(Kind.NEWLINE)
            if self._at(Kind.END) or self._take(Kind.WORD, "esac"):
                return
            self._take(Kind.OPERATOR, "(")
            while not self._at(Kind.END) and not self._take(Kind.OPERATOR, ")"):
                self._advance()  # the patterns and their `|`
            yield from self._list(depth, frozenset({"esac"}), _CASE_ENDS)
            self._skip(Kind.OPERATOR, *_CASE_ENDS)

    def _group(self, depth: int) -> Iterator[Statement]:
        yield from self._list(depth, frozenset({"}"}), _NONE)
        self._take(Kind.WORD, "}")

    def _subshell(self, depth: int) -> Iterator[Statement]:
        yield from self._list(depth, _NONE, frozenset({")"}))
        self._take(Kind.OPERATOR, ")")

    def _conditional(self, depth: int) -> Iterator[Statement]:
        self.lexer.skip_conditional()
        return iter(())


def _nothing(depth: int) -> Iterator[Statement]:
    return iter(())
