"""flake8 with TorchFix in this process, under the project's configuration (its
select, ignores, per-file ignores and ``# noqa`` comments), printing TorchFix's
findings only: the flake8 hook reports the others.

Run by the hook in its own process, or forked by the warm worker in the project's
interpreter as ``main([VERSIONS, FILE..., FD])``, which writes the versions it has to
FD. There, a flake8 or TorchFix other than VERSIONS (``null``: any) exits
:data:`UNAVAILABLE` with nothing printed, and the hook runs the check itself: the
result never depends on where it ran.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence

DISTRIBUTIONS = ("flake8", "torchfix")
CODE_PREFIX = "TOR"
UNAVAILABLE = 75  # EX_TEMPFAIL: not run here; the hook runs it itself
_FORMAT = "%(code)s\t%(path)s:%(row)d:%(col)d: %(code)s %(text)s"


def installed_versions() -> dict[str, str]:
    """The versions of flake8 and TorchFix here (a missing one is left out)."""
    import importlib.metadata  # only for files that mention torch: 0.03 s

    found = {}
    for name in DISTRIBUTIONS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def main(argv: Sequence[str]) -> int:
    wanted = json.loads(argv[0])
    found = installed_versions()
    with os.fdopen(int(argv[-1]), "w") as versions:
        versions.write(json.dumps(found))
    if wanted is not None and found != wanted:
        return UNAVAILABLE
    return check(argv[1:-1])


def check(files: Sequence[str]) -> int:
    """1 when TorchFix found something in ``files`` (printed as flake8 prints it);
    flake8's own exit code when it failed to run; else 0."""
    from flake8.main.cli import main as flake8

    descriptor, report = tempfile.mkstemp(prefix="mlsmoke-torchfix-", suffix=".txt")
    os.close(descriptor)
    try:
        code = flake8(["--format", _FORMAT, "--output-file", report, *files])
        with open(report, encoding="utf-8", errors="replace") as lines:
            found = torchfix_lines(lines)
    finally:
        os.unlink(report)
    for line in found:
        print(line)
    sys.stdout.flush()
    if found:
        return 1
    return 0 if code in (0, 1) else code


def torchfix_lines(lines: Iterable[str]) -> list[str]:
    """The report's TorchFix findings, as flake8 shows them."""
    found = []
    for line in lines:
        code, tab, shown = line.rstrip("\n").partition("\t")
        if tab and code.startswith(CODE_PREFIX):
            found.append(shown)
    return found
