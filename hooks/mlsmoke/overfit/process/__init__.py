"""The hook's side of the gate: the CLI, its settings, the pass cache, and the worker
process that trains in the project's interpreter. Nothing here imports torch at module
level, so that a cached pass starts no interpreter and imports no torch."""
