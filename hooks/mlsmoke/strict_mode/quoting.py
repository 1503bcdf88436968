"""Quote removal for the two places where the literal text matters: ``$'...'`` strings
(``IFS=$'\\n\\t'``) and here-document delimiters (``<<'EOF'``)."""

from __future__ import annotations

import re

_ANSI_C = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}|c.|.)", re.S)
_ANSI_C_NAMED = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f"}
_ANSI_C_NAMED |= {"v": "\v", "e": "\x1b", "E": "\x1b"}


def decode_ansi_c(body: str) -> str:
    def decode(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] == "x":
            return chr(int(escape[1:], 16))
        if escape[0] == "u" and len(escape) > 1:
            return chr(int(escape[1:], 16))
        if escape[0] in "01234567":
            return chr(int(escape, 8) & 0xFF)
        if escape[0] == "c" and len(escape) == 2:
            return chr(ord(escape[1]) & 0x1F)
        return _ANSI_C_NAMED.get(escape, escape)

    return _ANSI_C.sub(decode, body)


def heredoc_delimiter(raw: str) -> str:
    """The delimiter a here-document waits for: its word with the quotes removed."""
    out: list[str] = []
    index = 0
    quote = ""
    while index < len(raw):
        char = raw[index]
        if quote and char == quote:
            quote = ""
        elif not quote and char in "'\"":
            quote = char
        elif char == "\\" and quote != "'" and index + 1 < len(raw):
            index += 1
            out.append(raw[index])
        elif not (char == "$" and not quote and raw[index + 1 : index + 2] in "'\""):
            out.append(char)
        index += 1
    return "".join(out)
