"""An example's captured output is capped: a print loop cannot fill the memory."""

from __future__ import annotations

from mlsmoke.doctests.collecting_runner import CappedOutput


def test_output_past_the_cap_is_counted_not_kept() -> None:
    out = CappedOutput(cap=10)
    out.write("0123456789" * 3)
    out.write("more")
    assert out.getvalue() == "0123456789\n... 24 more characters, not kept\n"
    out.truncate(0)  # doctest's reset between examples
    out.write("ok\n")
    assert out.getvalue() == "ok\n"
