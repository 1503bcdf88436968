"""Hooks run ahead: the warm-worker hook, first in a commit, starts the torch hooks'
work in the background; each hook then takes its result when it is its own
(``runs.py``), or runs as it would have. ``jobs.py`` lists them, one module each."""
