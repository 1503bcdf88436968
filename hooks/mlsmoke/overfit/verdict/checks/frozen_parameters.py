"""``frozen-parameters``: the batch was memorized while some parameters were frozen
(``requires_grad=False``). The rest of the model learned the batch without them, so a
freeze left in by mistake (an experiment's ``requires_grad_(False)``, a backbone meant
to be fine-tuned) passes silently. Named by the outermost module whose parameters are
all frozen. A freeze on purpose is declared in the gate's ``frozen`` key (globs of
parameter names), and those parameters are not named again.

Every parameter frozen fails the gate (``no-gradient``); this check is for the part.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from mlsmoke.listing import first_few
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.diagnoses import _gradless
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import memorized
from mlsmoke.overfit.verdict.result import Warning

CODE = "frozen-parameters"
SHOWN = 4


def check(run: GateRun) -> list[Warning]:
    trainable = run.evidence.requires_grad
    frozen = [name for name, on in trainable.items() if not on]
    if not frozen or len(frozen) == len(trainable) or not memorized(run.evidence):
        return []
    declared = run.settings.frozen
    unexpected = [n for n in frozen if not any(fnmatchcase(n, g) for g in declared)]
    if not unexpected:
        return []
    groups = frozen_modules(list(trainable), set(frozen), set(unexpected))
    share = _gradless.share(unexpected, _sizes(run))
    training = [name for name, on in trainable.items() if on]
    return [
        Warning(
            CODE,
            f"{first_few(groups, SHOWN)} ({share}) frozen with requires_grad=False,"
            " and the batch was memorized without them; if the freeze is meant,"
            f" declare it: {_declaration(run, declaration_globs(groups, training))}",
        )
    ]


def frozen_modules(names: list[str], frozen: set[str], shown: set[str]) -> list[str]:
    """Each name of ``shown`` under the outermost module (a dotted prefix of
    ``names``) whose parameters are all in ``frozen``, as ``module.*``; a parameter
    whose module also trains is named alone."""
    groups: list[str] = []
    for name in names:
        if name not in shown or any(fnmatchcase(name, g) for g in groups):
            continue
        parts = name.split(".")
        group = name
        for end in range(1, len(parts)):
            prefix = ".".join(parts[:end]) + "."
            if all(n in frozen for n in names if n.startswith(prefix)):
                group = prefix + "*"
                break
        groups.append(group)
    return groups


def declaration_globs(groups: list[str], training: list[str]) -> list[str]:
    """The fewest globs for ``groups`` that match no parameter that trains: a module
    frozen wherever it occurs by its own name (``*.base_layer.*``: the weights that
    adapters train around), else with each index made ``*`` (``layers.*.attn.*``: a
    freeze repeated in every layer), else the group itself."""
    globs: list[str] = []
    for group in groups:
        chosen = next(
            glob
            for glob in (*_generalized(group), group)
            if not any(fnmatchcase(name, glob) for name in training)
        )
        if chosen not in globs:
            globs.append(chosen)
    return globs


def _generalized(group: str) -> list[str]:
    parts = group.split(".")
    if parts[-1] != "*":
        return []  # one parameter, named alone
    found = []
    if len(parts) > 2 and not parts[-2].isdigit():
        found.append(f"*.{parts[-2]}.*")
    found.append(".".join("*" if part.isdigit() else part for part in parts))
    return found


def _declaration(run: GateRun, groups: list[str]) -> str:
    globs = "[" + ", ".join(f'"{group}"' for group in groups) + "]"
    if run.settings.where == "api":
        return f"check(..., frozen={globs})"
    return f"{run.settings.key_path('frozen')} = {globs}"


def _sizes(run: GateRun) -> dict[str, int]:
    try:
        return forward_probes.parameter_sizes(run)
    except Exception:  # the factory's own failure: the share goes unsaid
        return {}
