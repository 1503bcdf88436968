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

from mlsmoke.strict_mode.quoting import decode_ansi_c, heredoc_delimiter


class NeedMore(Exception):
    """The text ends before the answer; read more of the file."""


class Kind(enum.Enum):
    WORD = "word"
    OPERATOR = "operator"
    REDIRECT = "redirect"
    NEWLINE = "newline"
    ARITHMETIC = "arithmetic"
    END = "end"


@dataclass(frozen=True)
class Word:
    raw: str
    value: str | None  # after quote removal; None when it holds an expansion
    start: int
    end: int


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
_PLAIN_IN_DOUBLE_QUOTES = re.compile(r"[^\"\\$`]+")
_PLAIN_IN_BRACES = re.compile(r"[^}\\'\"$`]+")
_PLAIN_IN_PARENS = re.compile(r"[^()\\'\"$`#\n]+")
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_FD_NAME = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")
# Characters that end a word when no quote or expansion holds them.
_WORD_END = frozenset(" \t\n;&|()<>")
# A lookahead margin: a token this close to the end of a partial text is not trusted.
_MARGIN = 4


class Lexer:
    """A cursor over ``text`` that hands out tokens on demand."""

    def __init__(
        self,
        text: str,
        at_eof: bool,
        start: int,
        parse_substitution: Callable[[], None],
    ) -> None:
        self.text = text
        self.at_eof = at_eof
        self.pos = start
        self.comments: list[tuple[int, int]] = []
        self._parse_substitution = parse_substitution
        self._heredocs: list[tuple[str, bool]] = []
        self._safe_end = len(text) if at_eof else len(text) - _MARGIN

    # -- reading characters --

    def _char(self, index: int) -> str:
        if index < self._safe_end:
            return self.text[index]
        if self.at_eof:
            return self.text[index] if index < len(self.text) else ""
        raise NeedMore

    def _trust(self, end: int) -> int:
        if end > self._safe_end and not self.at_eof:
            raise NeedMore
        return end

    def _find(self, needle: str, start: int) -> int:
        """The index of ``needle`` from ``start``; the end of the text at EOF."""
        index = self.text.find(needle, start)
        if index == -1:
            if not self.at_eof:
                raise NeedMore
            return len(self.text)
        return self._trust(index)

    # -- tokens --

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
            self._char(start + 2)  # operators are up to three characters long
            operator = _OPERATOR.match(self.text, start).group()
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
                self._char(self.pos + 2)
                operator = _OPERATOR.match(self.text, self.pos).group()
                return self._redirect(start, operator)
        return token

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

    # -- words --

    def _word(self, plain: re.Pattern[str]) -> Word:
        start = self.pos
        parts: list[str] = []
        literal = True
        if (
            self._char(start) in ("<", ">") and self._char(start + 1) == "("
        ):  # <(...), >(...)
            self.pos = start + 2
            self._parse_substitution()
            literal = False
        while True:
            match = plain.match(self.text, self.pos)
            if match:
                self.pos = self._trust(match.end())
                parts.append(match.group())
            char = self._char(self.pos)
            if char == "\\":
                parts.append(self._backslash())
            elif char == "'":
                end = self._find("'", self.pos + 1)
                parts.append(self.text[self.pos + 1 : end])
                self.pos = end + 1
            elif char == '"':
                self.pos += 1
                literal &= self._double_quoted(parts)
            elif char == "$":
                literal &= self._dollar(parts, quoted=False)
            elif char == "`":
                self.pos = self._backtick_end(self.pos + 1)
                literal = False
            elif char == "(" and self._opens_group(start, parts):
                self.pos = self._group_end(self.pos + 1)
                literal = False
            elif char == "\r" and self._char(self.pos + 1) != "\n":
                parts.append("\r")
                self.pos += 1
            elif not match:
                break
        raw = self.text[start : self.pos]
        return Word(raw, "".join(parts) if literal else None, start, self.pos)

    def _opens_group(self, start: int, parts: list[str]) -> bool:
        """``(`` inside a word opens an array (``a=(``) or an extglob (``@(``)."""
        before = self.text[start : self.pos]
        if before and before[-1] in "@!+*?":
            return True
        return _ARRAY_ASSIGNMENT.fullmatch(before) is not None

    def _backslash(self) -> str:
        following = self._char(self.pos + 1)
        if following == "\n":
            self.pos += 2
            return ""
        if following == "\r" and self._char(self.pos + 2) == "\n":
            self.pos += 3
            return ""
        self.pos += 2 if following else 1
        return following or "\\"

    def _double_quoted(self, parts: list[str]) -> bool:
        """Scan to the closing quote; returns whether it holds no expansion."""
        literal = True
        while True:
            match = _PLAIN_IN_DOUBLE_QUOTES.match(self.text, self.pos)
            if match:
                self.pos = self._trust(match.end())
                parts.append(match.group())
            char = self._char(self.pos)
            if char == '"' or char == "":
                self.pos += 1
                return literal
            if char == "\\":
                following = self._char(self.pos + 1)
                if following in ("$", "`", '"', "\\", "\n"):
                    parts.append(self._backslash())
                else:
                    parts.append("\\")
                    self.pos += 1
            elif char == "$":
                literal &= self._dollar(parts, quoted=True)
            else:  # a backtick
                self.pos = self._backtick_end(self.pos + 1)
                literal = False

    def _dollar(self, parts: list[str], quoted: bool) -> bool:
        """Scan one ``$`` form; returns whether it was literal text."""
        following = self._char(self.pos + 1)
        if following == "'" and not quoted:
            end = self._ansi_c_end(self.pos + 2)
            parts.append(decode_ansi_c(self.text[self.pos + 2 : end]))
            self.pos = end + 1
            return True
        if following == '"' and not quoted:
            self.pos += 2
            return self._double_quoted(parts)
        if following == "(":
            if self._char(self.pos + 2) == "(":
                self.pos = self._arithmetic_end(self.pos + 3, depth=2)
            else:
                self.pos += 2
                self._parse_substitution()
            return False
        if following == "{":
            self.pos = self._braced_end(self.pos + 2)
            return False
        match = _PARAMETER.match(self.text, self.pos + 1) if following else None
        if match:
            self.pos = self._trust(match.end())
            return False
        parts.append("$")
        self.pos += 1
        return True

    def _ansi_c_end(self, index: int) -> int:
        while True:
            char = self._char(index)
            if char == "'" or char == "":
                return index
            index += 2 if char == "\\" else 1

    def _backtick_end(self, index: int) -> int:
        while True:
            char = self._char(index)
            if char == "`" or char == "":
                return index + 1
            index += 2 if char == "\\" else 1

    def _braced_end(self, index: int) -> int:
        self.pos = index
        scratch: list[str] = []
        while True:
            match = _PLAIN_IN_BRACES.match(self.text, self.pos)
            if match:
                self.pos = self._trust(match.end())
            char = self._char(self.pos)
            if char in ("}", ""):
                return self.pos + 1
            if char == "\\":
                self._backslash()
            elif char == "'":
                self.pos = self._find("'", self.pos + 1) + 1
            elif char == '"':
                self.pos += 1
                self._double_quoted(scratch)
            elif char == "$":
                self._dollar(scratch, quoted=True)
            else:
                self.pos = self._backtick_end(self.pos + 1)

    def _arithmetic_end(self, index: int, depth: int) -> int:
        return self._balanced_end(index, depth, comments=False)

    def _group_end(self, index: int) -> int:
        return self._balanced_end(index, 1, comments=True)

    def _balanced_end(self, index: int, depth: int, comments: bool) -> int:
        self.pos = index
        scratch: list[str] = []
        while depth:
            match = _PLAIN_IN_PARENS.match(self.text, self.pos)
            if match:
                self.pos = self._trust(match.end())
            char = self._char(self.pos)
            if char == "":
                break
            if char in "()":
                depth += 1 if char == "(" else -1
                self.pos += 1
            elif char == "#" and comments and self.text[self.pos - 1] in " \t\n(":
                self.pos = self._find("\n", self.pos)
            elif char in "#\n":
                self.pos += 1
            elif char == "\\":
                self._backslash()
            elif char == "'":
                self.pos = self._find("'", self.pos + 1) + 1
            elif char == '"':
                self.pos += 1
                self._double_quoted(scratch)
            elif char == "$":
                self._dollar(scratch, quoted=False)
            else:
                self.pos = self._backtick_end(self.pos + 1)
        return self.pos
