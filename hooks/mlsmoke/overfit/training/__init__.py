"""The training side, run inside the project's interpreter: the memorization loop, the
device and dtype it trains on, the optimizers, the default objective, determinism, the
instruments that observe the loop, and the Evidence record they write."""
