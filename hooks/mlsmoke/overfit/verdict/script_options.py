"""A training script's own settings that ``args`` can give, named like a knob the
advice is about (its dropout, its epochs): read from its source as ``mlsmoke init``
reads them (``script_settings.py``), so that advice names only what exists."""

from __future__ import annotations

import ast
import re

from mlsmoke.script_settings import (
    Setting,
    argparse_settings,
    configurator_settings,
    dataclass_settings,
    dotted_settings,
)

READERS = (configurator_settings, argparse_settings, dataclass_settings,
           dotted_settings)  # fmt: skip


def settings_named(path: str, name: re.Pattern[str]) -> list[Setting]:
    """The settings of the script at ``path`` whose lower-case name ``name``
    matches, from the first way of taking settings it uses; [] when it cannot be
    read."""
    try:
        with open(path, "rb") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return []
    for read in READERS:
        found = [setting for setting in read(tree) if name.search(setting.name.lower())]
        if found:
            return found
    return []
