"""Repairs the gate tries on a copy of the batch before it blames the batch.

When the step raises, or its first loss is not finite, an engineer changes the suspect
field and runs the step again. So does the gate: each module here proposes repairs of
one kind from what a field holds and what the model's output is (:class:`Context`),
and :mod:`.trial` applies each to a copy of the batch and runs forward and loss once.
The repair that made the step run names the diagnosis, and is the first thing the
report tells the user to try. A new kind of repair is a new module plus a line in
KINDS.
"""

from __future__ import annotations

from mlsmoke.overfit.verdict.repairs import casts, forms, layouts, ranges
from mlsmoke.overfit.verdict.repairs.repair import Context, Proposer, Repair

# In the order tried when the error's words point nowhere in particular.
KINDS: list[Proposer] = [casts.propose, ranges.propose, forms.propose, layouts.propose]

__all__ = ["KINDS", "Context", "Repair"]
