"""The errors mlsmoke reports to users, and the exit codes they map to.

Every error a user can cause is one of these. The CLI prints it once, as one
message, and exits with its code; users never see a traceback from mlsmoke's own code.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class MlsmokeError(Exception):
    """A problem the user can fix; ``str(error)`` is the whole message."""

    exit_code = EXIT_USAGE


class UsageError(MlsmokeError):
    """Bad command-line arguments or paths."""


class ConfigError(MlsmokeError):
    """Bad configuration; the message starts with the key path (``tool.mlsmoke.x``)."""


class EnvironmentProblem(MlsmokeError):
    """The project's environment cannot run the hook (no interpreter, no module)."""
