"""The ``bash-strict-mode`` hook: shell scripts turn on errexit, nounset and pipefail.

The parts, each answering one question:

- :mod:`.shebang`: which shell runs the script (the dialect);
- :mod:`.lexer` and :mod:`.parser`: the script's statements, with their nesting;
- :mod:`.checker`: whether strict mode is on before the first real command (pure);
- :mod:`.fixer`: the smallest edit that turns it on (pure);
- :mod:`.files` and :mod:`.main`: reading, skipping, atomic writes, output.
"""
