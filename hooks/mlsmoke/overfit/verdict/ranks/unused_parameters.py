"""Parameters that the forward does not use: DDP raises at the next forward (with
``find_unused_parameters=False``, its default) and names them by index only; the gate
names the modules, and the project's line of the forward where DDP stopped (when the
project's code calls the forward: a step function, a script)."""

from __future__ import annotations

import re

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "unused-parameters"
_INDICES = re.compile(r"did not receive grad for rank (\d+): ([\d ]+)")


def diagnose(ranks: Ranks) -> Diagnosis | None:
    for record in ranks.records:
        found = _INDICES.search(record.error)
        if found is None and "Expected to have finished reduction" not in record.error:
            continue
        indices = [int(i) for i in found.group(2).split()] if found else []
        names = [record.parameter_names[i] for i in indices
                 if i < len(record.parameter_names)]  # fmt: skip
        modules = sorted({name.rpartition(".")[0] or name for name in names})
        end = next(end for end in ranks.ends if end.rank == record.rank)
        where = ranks.innermost_line(end)
        summary = (
            f"the forward leaves parameters without a gradient on rank {record.rank}"
            + (f": module(s) {', '.join(modules)}" if modules else "")
            + "; DDP stops at the next step"
            + (f", at {where}" if where else "")
        )
        evidence = (
            [f"parameters without a gradient: {', '.join(names)}"] if names else []
        )
        evidence += [record.traceback] if record.traceback else []
        return Diagnosis(CODE, summary, evidence, [
            "use every parameter in the forward, or remove the module",
            "or, if the module is skipped on purpose on some steps, wrap with"
            " DistributedDataParallel(model, find_unused_parameters=True)",
        ])  # fmt: skip
    return None
