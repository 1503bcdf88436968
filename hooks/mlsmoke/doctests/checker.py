"""pytest's three doctest option flags, with pytest's meaning.

Standard library only: this runs inside the project's interpreter.

- ``ALLOW_UNICODE``: ``u'x'`` and ``'x'`` match;
- ``ALLOW_BYTES``: ``b'x'`` and ``'x'`` match;
- ``NUMBER``: a float matches to the precision written in the expected output
  (``3.14`` matches ``3.14159``; ``1e-3`` to the unit of its last digit).

The checker is pytest's own rule (``_pytest/doctest.py``), so an example passes here
when it passes under ``pytest --doctest-modules`` with the same flags.
"""

from __future__ import annotations

import doctest
import math
import re

PYTEST_FLAGS = ("ALLOW_UNICODE", "ALLOW_BYTES", "NUMBER")
ALLOW_UNICODE, ALLOW_BYTES, NUMBER = (
    doctest.register_optionflag(name) for name in PYTEST_FLAGS
)

_UNICODE_LITERAL = re.compile(r"(\W|^)[uU]([rR]?[\'\"])", re.UNICODE)
_BYTES_LITERAL = re.compile(r"(\W|^)[bB]([rR]?[\'\"])", re.UNICODE)
_NUMBER = re.compile(
    r"""
    (?P<number>
      (?P<mantissa>
        (?P<integer1> [+-]?\d*)\.(?P<fraction>\d+)
        |
        (?P<integer2> [+-]?\d+)\.
      )
      (?:
        [Ee]
        (?P<exponent1> [+-]?\d+)
      )?
      |
      (?P<integer3> [+-]?\d+)
      (?:
        [Ee]
        (?P<exponent2> [+-]?\d+)
      )
    )
    """,
    re.VERBOSE,
)
_RELATIVE = 1e-6  # pytest.approx's default relative tolerance


class PytestFlagsChecker(doctest.OutputChecker):
    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        if not optionflags & (ALLOW_UNICODE | ALLOW_BYTES | NUMBER):
            return False
        if optionflags & ALLOW_UNICODE:
            want, got = _UNICODE_LITERAL.sub(r"\1\2", want), _UNICODE_LITERAL.sub(
                r"\1\2", got
            )
        if optionflags & ALLOW_BYTES:
            want, got = _BYTES_LITERAL.sub(r"\1\2", want), _BYTES_LITERAL.sub(
                r"\1\2", got
            )
        if optionflags & NUMBER:
            got = _within_precision(want, got)
        return super().check_output(want, got, optionflags)


def _within_precision(want: str, got: str) -> str:
    """``got`` with each number that matches the expected one to its written precision
    replaced by the expected text."""
    wants, gots = list(_NUMBER.finditer(want)), list(_NUMBER.finditer(got))
    if len(wants) != len(gots):
        return got
    offset = 0
    for expected, actual in zip(wants, gots):
        exponent = expected["exponent1"] or expected["exponent2"]
        precision = len(expected["fraction"] or "")
        if exponent is not None:
            precision -= int(exponent)
        if _close(float(expected.group()), float(actual.group()), 10.0**-precision):
            start, end = actual.start() + offset, actual.end() + offset
            got = got[:start] + expected.group() + got[end:]
            offset += len(expected.group()) - (actual.end() - actual.start())
    return got


def _close(expected: float, actual: float, absolute: float) -> bool:
    """``expected == pytest.approx(actual, abs=absolute)``."""
    if expected == actual:
        return True
    if math.isinf(expected) or math.isinf(actual):
        return False
    tolerance = max(_RELATIVE * abs(actual), absolute)
    return abs(expected - actual) <= tolerance
