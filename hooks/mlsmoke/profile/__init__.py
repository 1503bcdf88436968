"""``mlsmoke profile``: where the time of the project's training step goes, and what
to change.

- ``main.py``: the command (no torch): arguments, the run, the summary, record/check.
- ``worker.py`` and ``session.py``: in the project's interpreter, the gate's model and
  recipe stepped on the project's real loader (``batches.py``), under
  ``torch.profiler``; ``machine.py`` reads the device, memory and CUDA syncs.
- ``trace.py``: the profiler's Chrome trace events -> the figures (``figures.py``).
- ``rules/``: one module per recommendation, each a threshold on a measured figure.
- ``report.py``: the terminal summary; ``baseline.py``: ``--record`` and ``--check``.
"""
