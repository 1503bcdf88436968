"""Tokens of shell source: words, operators, redirections and newlines.

The lexer knows enough of the shell's grammar to find statements reliably: comments, the
three kinds of quotes and ``$'...'``, backslash-newline continuations, ``$(...)``,
backticks, ``${...}``, ``$((...))``, process substitution, arrays, extglobs,
``[[ ... ]]`` and here-document bodies, which it skips at the next newline.

It works on a prefix of the file. When a token could run past the end of the text it has
and the file goes on, it raises :class:`NeedMore`; the caller reads more and starts
again. A CR right before LF belongs to the line ending, so CRLF scripts read like LF.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from mlsmoke.strict_mode.quoting import heredoc_delimiter
from mlsmoke.strict_mode.words import NeedMore, Word, WordScanner


class Kind(enum.Enum):
    WORD = "word"
    OPERATOR = "operator"
    REDIRECT = "redirect"
    NEWLINE = "newline"
    ARITHMETIC = "arithmetic"
    END = "end"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    start: int
    end: int
    word: Word | None = None


_OPERATOR = re.compile(
    r";;&|;;|;&|;|&&|&>>|&>|&|\|\||\|&|\||<<<|<<-|<<|<>|<&|<|>>|>&|>\||>|\(|\)"
)
_REDIRECTS = frozenset({"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&"})
_REDIRECTS |= {">|", ">"}
_BLANKS = re.compile(r"(?:[ \t\f\v]|\\\r?\n|\r(?=\n))+")
_PLAIN = re.compile(r"[^ \t\n\r;&|()<>\\'\"`$]+")
_PLAIN_IN_CONDITIONAL = re.compile(r"[^ \t\n\r;\\'\"`$]+")
_FD_NAME = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")
# Characters that end a word when no quote or expansion holds them.
_WORD_END = frozenset(" \t\n;&|()<>")


class Lexer(WordScanner):
    """A cursor over ``text`` that hands out tokens on demand."""

    def __init__(
        self,
        text: str,
        at_eof: bool,
        start: int,
        parse_substitution: Callable[[], None],
    ) -> None:
        super().__init__(text, at_eof, start, parse_substitution)
        self.comments: list[tuple[int, int]] = []
        self._heredocs: list[tuple[str, bool]] = []

    def next_token(self) -> Token:
        self._skip_blanks_and_comments()
        start = self.pos
        char = self._char(start)
        if char == "":
            return Token(Kind.END, "", start, start)
        if char == "\n":
            self.pos += 1
            self._skip_heredoc_bodies()
            return Token(Kind.NEWLINE, "\n", start, start + 1)
        if char in "<>" and self._char(start + 1) == "(":
            return self._word_token()
        if char in ";&|()<>":
            operator = self._operator(start)
            if operator in _REDIRECTS:
                return self._redirect(start, operator)
            if operator == "(" and self._char(start + 1) == "(":
                self.pos = self._arithmetic_end(start + 2, depth=2)
                return Token(
                    Kind.ARITHMETIC, self.text[start : self.pos], start, self.pos
                )
            self.pos = start + len(operator)
            return Token(Kind.OPERATOR, operator, start, self.pos)
        token = self._word_token()
        after = self._char(self.pos)
        if after and after in "<>" and self._char(self.pos + 1) != "(":
            if _FD_NAME.fullmatch(token.text):
                return self._redirect(start, self._operator(self.pos))
        return token

    def _operator(self, start: int) -> str:
        self._char(start + 2)  # operators are up to three characters long
        match = _OPERATOR.match(self.text, start)
        return match.group() if match else self.text[start]

    def skip_conditional(self) -> None:
        """Skip the inside of ``[[ ... ]]``, where ``<``, ``(`` and ``|`` are plain."""
        while True:
            self._skip_blanks_and_comments()
            char = self._char(self.pos)
            if char == "":
                return
            if char in "\n;":
                self.pos += 1
                continue
            if self.text.startswith("]]", self.pos):
                after = self._char(self.pos + 2)
                if after == "" or after in _WORD_END or after == "\r":
                    self.pos += 2
                    return
            self._word(_PLAIN_IN_CONDITIONAL)

    def _skip_blanks_and_comments(self) -> None:
        while True:
            self._char(self.pos + 2)  # enough lookahead for `\` CR LF
            match = _BLANKS.match(self.text, self.pos)
            if match:
                self.pos = self._trust(match.end())
            if self._char(self.pos) != "#":
                return
            end = self._find("\n", self.pos)
            if end > self.pos and self.text[end - 1] == "\r":
                end -= 1
            self.comments.append((self.pos, end))
            self.pos = end

    def _word_token(self) -> Token:
        word = self._word(_PLAIN)
        return Token(Kind.WORD, word.raw, word.start, word.end, word)

    def _redirect(self, start: int, operator: str) -> Token:
        self.pos += len(operator)
        self._skip_blanks_and_comments()
        if self._char(self.pos) in ("", "\n") or self.text[self.pos] in ";&|()":
            return Token(Kind.REDIRECT, self.text[start : self.pos], start, self.pos)
        target = self._word(_PLAIN)
        if operator in ("<<", "<<-"):
            self._heredocs.append((heredoc_delimiter(target.raw), operator == "<<-"))
        return Token(
            Kind.REDIRECT, self.text[start : self.pos], start, self.pos, target
        )

    def _skip_heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self._heredocs:
            tabs = "\t*" if strip_tabs else ""
            pattern = re.compile(rf"^{tabs}{re.escape(delimiter)}\r?$", re.M)
            match = pattern.search(self.text, self.pos)
            if match is None:
                if not self.at_eof:
                    raise NeedMore
                self.pos = len(self.text)
                break
            end = self._trust(match.end())
            self.pos = end + 1 if end < len(self.text) else end
        self._heredocs.clear()
