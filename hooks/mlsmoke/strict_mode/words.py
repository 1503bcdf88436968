"""Shell words: where one ends, and its literal value once the quotes are removed.

A word can hold single, double and ``$'...'`` quotes, backslash escapes and line
continuations, ``$name``, ``${...}``, ``$(...)`` (whose commands the parser reads),
``$((...))``, backticks, arrays (``a=(x y)``) and extglobs (``@(a|b)``).

The scanner works on a prefix of the file. When a word could run past the end of the
text it has, and the file goes on, it raises :class:`NeedMore`; the caller reads more
and starts again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mlsmoke.strict_mode.quoting import decode_ansi_c

_PLAIN_IN_DOUBLE_QUOTES = re.compile(r"[^\"\\$`]+")
_PLAIN_IN_BRACES = re.compile(r"[^}\\'\"$`]+")
_PLAIN_IN_PARENS = re.compile(r"[^()\\'\"$`#\n]+")
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# A lookahead margin: a token this close to the end of a partial text is not trusted.
_MARGIN = 4


class NeedMore(Exception):
    """The text ends before the answer; read more of the file."""


@dataclass(frozen=True)
class Word:
    raw: str
    value: str | None  # after quote removal; None when it holds an expansion
    start: int
    end: int


class WordScanner:
    """A cursor over ``text`` that reads words; :class:`~.lexer.Lexer` adds tokens."""

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
        self._parse_substitution = parse_substitution  # reads a $(...) body
        self._safe_end = len(text) if at_eof else len(text) - _MARGIN

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
            self._skip_quoted(char, scratch, dollar_quoted=True)

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
            else:
                self._skip_quoted(char, scratch, dollar_quoted=False)
        return self.pos

    def _skip_quoted(self, char: str, scratch: list[str], dollar_quoted: bool) -> None:
        """Step over what starts at ``char``: a backslash escape, a quoted string, a
        ``$`` form or a backtick command, inside ``${...}`` or parentheses."""
        if char == "\\":
            self._backslash()
        elif char == "'":
            self.pos = self._find("'", self.pos + 1) + 1
        elif char == '"':
            self.pos += 1
            self._double_quoted(scratch)
        elif char == "$":
            self._dollar(scratch, quoted=dollar_quoted)
        else:
            self.pos = self._backtick_end(self.pos + 1)
