"""What real pre-commit printed: the hooks it reports as passed.

A plain module, not conftest.py, so that test files of any directory import it by name.
"""

from __future__ import annotations


def passed_hooks(output: str) -> set[str]:
    """The names of the hooks pre-commit reports as Passed in ``output``."""
    return {
        line.rsplit("Passed", 1)[0].rstrip(".").strip()
        for line in output.splitlines()
        if line.endswith("Passed")
    }
