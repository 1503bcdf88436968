"""Where a training script's dropout can be turned off, for advice that names only
knobs the script has: its own settings (``--dropout``, a config dataclass's field)
that ``args`` can set, else the model's config object that sets the rates
(``BertConfig``'s ``hidden_dropout_prob``), else the model's own code."""

from __future__ import annotations

import ast
from typing import Any

from mlsmoke.adopt.script_settings import (
    argparse_settings,
    configurator_settings,
    dataclass_settings,
    dotted_settings,
)

READERS = (configurator_settings, argparse_settings, dataclass_settings,
           dotted_settings)  # fmt: skip
WORDS = ("dropout", "drop_rate", "drop_prob")


def dropout_options(source: str) -> list[str]:
    """The options of the script's settings named like a dropout rate."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    for read in READERS:
        options = [
            setting.option
            for setting in read(tree)
            if any(word in setting.name.lower() for word in WORDS)
        ]
        if options:
            return options
    return []


def config_rates(model: Any) -> tuple[str, list[str]] | None:
    """The model's config object and its dropout rates above 0, as
    ``("BertConfig", ["hidden_dropout_prob=0.1", ...])``; None without one."""
    config = getattr(model, "config", None)
    try:
        values = vars(config)
    except TypeError:
        return None
    rates = [
        f"{name}={value:g}"
        for name, value in values.items()
        if any(word in name.lower() for word in WORDS)
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value > 0
    ]
    return (type(config).__name__, rates) if rates else None


def advice(script: str, source: str, model: Any) -> str:
    """How the user of ``script`` (its text ``source``, its trained ``model``, None
    when unknown) turns its dropout off for the gate: "so set ..." when args can,
    "but ..." and where it is set when they cannot."""
    options = dropout_options(source)
    if options:
        return f"so set {script}'s {' or '.join(options)} to 0 in args"
    found = config_rates(model)
    where = (
        f"{found[0]} sets it ({', '.join(found[1])})"
        if found
        else "the model's code sets it"
    )
    return (
        f"but {script} takes no dropout setting that args could give: {where}; a run"
        " that stops short of the target is judged in eval mode, with dropout off"
    )
