"""The errors mlsmoke reports to users, and the exit codes they map to.

Every error a user can cause is one of these. The CLI prints it once, as one
message, and exits with its code; users never see a traceback from mlsmoke's own code.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM; 129 (128 + SIGHUP) for a hangup


class MlsmokeError(Exception):
    """A problem the user can fix; ``str(error)`` is the whole message."""

    exit_code = EXIT_USAGE


class UsageError(MlsmokeError):
    """Bad command-line arguments or paths."""


class ConfigError(MlsmokeError):
    """Bad configuration; the message starts with the key path (``tool.mlsmoke.x``)."""


class EnvironmentProblem(MlsmokeError):
    """The project's environment cannot run the hook (no interpreter, no module)."""


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell shows for `cat big | head -1`


class Terminated(BaseException):
    """SIGTERM or SIGHUP reached mlsmoke (a cancelled CI job, a closed terminal).

    A BaseException, like KeyboardInterrupt: no ``except Exception`` may swallow it on
    its way to the CLI, which exits 128 + the signal's number.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
