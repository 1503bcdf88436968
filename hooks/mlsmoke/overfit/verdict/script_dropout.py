"""Where a training script's dropout can be turned off, for advice that names only
knobs the script has: its own settings (``--dropout``, a config dataclass's field)
that ``args`` can set, else its module-level assignments (``dropout = 0.2``) that
``globals`` can give, else the model's config object that sets the rates
(``BertConfig``'s ``hidden_dropout_prob``), else the model's own code."""

from __future__ import annotations

import re
from typing import Any

from mlsmoke.overfit.training.script_globals import assigned_names
from mlsmoke.overfit.verdict.script_options import settings_named

# Names only pick which setting the advice mentions; whether dropout is on is read
# from the modules that ran in training mode (verdict/dropout.py).
RATE = re.compile(r"dropout|drop_rate|drop_prob")


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
        if RATE.search(name.lower())
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value > 0
    ]
    return (type(config).__name__, rates) if rates else None


def advice(script: str, model: Any) -> str:
    """How the user of ``script`` (its trained ``model``, None when unknown) turns
    its dropout off for the gate: "so set ..." when args can, "but ..." and where
    it is set when they cannot."""
    options = [setting.option for setting in settings_named(script, RATE)]
    if options:
        return f"so set {script}'s {' or '.join(options)} to 0 in args"
    names = [name for name in assigned_names(script) if RATE.search(name.lower())]
    if names:
        given = ", ".join(f"{name} = 0.0" for name in names)
        return (
            f"so give {script}'s module-level {' and '.join(names)} 0 for the gate:"
            f" globals = {{ {given} }}"
        )
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
