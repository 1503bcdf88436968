"""The ``bash-strict-mode`` hook: shell scripts turn on errexit, nounset and pipefail.

The parts, each answering one question:

- :mod:`.shebang`: which shell runs the script (the dialect);
- :mod:`.words`, :mod:`.lexer` and :mod:`.parser`: the script's statements, nested;
- :mod:`.statements`: what a ``set``, an ``IFS=`` or a header command means;
- :mod:`.checker`: whether strict mode is on before the first real command (pure),
  with the :mod:`.pragma` escape valve;
- :mod:`.fixer`: the smallest edit that turns it on (pure);
- :mod:`.settings`: ``[tool.mlsmoke.strict-mode]``;
- :mod:`.files` and :mod:`.main`: reading, skipping, atomic writes, output.
"""
