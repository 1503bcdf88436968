"""Command lines of the hooks: file names that look like options.

pre-commit passes the staged files without a ``--`` before them, so argparse would read
a file named ``-x.sh`` as an unknown option and stop the hook.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

_HELP = ("-h", "--help")


def files_after_dashes(argv: Sequence[str], options: Collection[str]) -> list[str]:
    """``argv`` with the file names that look like options moved after ``--``.

    An argument that starts with ``-``, is not one of ``options`` or a help flag, and
    names an existing path is a file name.
    """
    kept: list[str] = []
    files: list[str] = []
    for index, argument in enumerate(argv):
        if argument == "--":
            files += argv[index + 1 :]
            break
        if argument.startswith("-") and argument not in options:
            if argument not in _HELP and os.path.lexists(argument):
                files.append(argument)
                continue
        kept.append(argument)
    return kept + ["--", *files] if files else kept
