"""The command that runs one of mlsmoke's modules inside the project's interpreter.

mlsmoke need not be installed there: the command loads it from this installation, in
a process that looks to the project's code like ``python -c``.
"""

from __future__ import annotations

import os
from pathlib import Path

import mlsmoke

# The child dies with the hook: on Linux its parent-death signal is SIGKILL, so even a
# SIGKILL of the hook (which no handler sees) does not leave it running as an orphan.
# Checking the hook is still there afterwards closes the race of a hook that died
# before prctl. (Through a wrapper that forks, the parent is the wrapper.) The warm
# worker, which outlives its hook by design, is started with parent 0 and ends itself.
#
# The project's code must see the process that ``python -c 'import mod'`` gives it:
# ``sys.argv == ["-c"]``, an empty ``__main__``, the project root as the working
# directory. So mlsmoke's arguments are taken out of sys.argv before anything else runs,
# the entry module is imported under its own name (never as ``__main__``), the
# bootstrap's names are locals of a function that removes itself from ``__main__``,
# and the working directory's "" entry leaves sys.path until mlsmoke's own imports are
# done: a project file named json.py must not replace the standard library under
# mlsmoke. The entry module puts the project's roots back. Its ``main(args)`` returns
# the exit code; interpreter shutdown is skipped, since the project's code may have
# left non-daemon threads or slow atexit handlers behind.
_BOOTSTRAP = """\
def _bootstrap():
    del globals()["_bootstrap"]  # __main__ stays as empty as python -c leaves it
    import importlib, importlib.util, os, sys
    package, parent, module = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    args = sys.argv[4:]
    sys.argv[:] = ["-c"]
    if sys.path[:1] == [""]:
        del sys.path[0]
    if parent and sys.platform.startswith("linux"):
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(143)
            except OSError:
                pass
    spec = importlib.util.spec_from_file_location(
        "mlsmoke", package + "/__init__.py", submodule_search_locations=[package]
    )
    mlsmoke = importlib.util.module_from_spec(spec)
    sys.modules["mlsmoke"] = mlsmoke
    spec.loader.exec_module(mlsmoke)
    code = importlib.import_module(module).main(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
_bootstrap()
"""


def module_command(
    python: Path, module: str, *args: str, dies_with_caller: bool = True
) -> list[str]:
    """The argv that runs ``<module>.main(args)`` in ``python``, with this mlsmoke
    importable and a process that looks to the project's code like ``python -c``."""
    package = str(Path(mlsmoke.__file__).resolve().parent)
    parent = str(os.getpid()) if dies_with_caller else "0"
    return [str(python), "-c", _BOOTSTRAP, package, parent, module, *args]
