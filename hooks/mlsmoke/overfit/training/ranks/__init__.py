"""The gate under ``torch.distributed``: what each rank runs and records (see
docs/distributed.md). ``process/ranks.py`` starts the ranks; ``verdict/ranks/``
judges their records together."""
