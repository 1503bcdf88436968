"""Interventions: a cause is checked by fixing it on a copy and training again.

A diagnosis inferred from evidence (parameters that get no gradient, a learning rate,
dropout) is a hypothesis. Its intervention changes that one thing in a fresh copy of
the model (the project's model and batch are never touched), re-runs the gate's
training, and the cause is named only when the copy memorizes the batch, or gets
measurably closer to the target in the same steps. One module per intervention; the
shared runner (``runner.py``) keeps them all within one time budget.
"""
