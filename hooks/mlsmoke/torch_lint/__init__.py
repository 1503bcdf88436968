"""``mlsmoke torchfix``: TorchFix's checks without paying TorchFix's import at every
commit.

flake8 imports every installed plugin at start, and TorchFix's import (libcst and its
tables) costs about 0.6 s, paid at every commit that touches Python. The flake8 hook
stays lean; this hook runs flake8 with TorchFix, under the project's own flake8
configuration, and reports TorchFix's codes only:

- ``main.py``: the hook: which files, and where flake8 runs;
- ``job.py``: flake8 in one process, its TorchFix findings printed.

It runs in the project's warm worker when that worker is ready and its interpreter has
the same flake8 and TorchFix as the hook (their import then paid once per working
session), and in the hook's own process otherwise: on pre-commit.ci, with no project
environment, it runs there as flake8 did.
"""
