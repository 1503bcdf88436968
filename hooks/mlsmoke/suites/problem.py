"""The error a project's suites raise in its interpreter: bad input that names the
key to fix (a checkpoint that does not fit the model, a metric that raises)."""

from __future__ import annotations

from mlsmoke.errors import MlsmokeError


class SuitesProblem(MlsmokeError):
    """``str(error)`` names the key; ``traceback`` is the project's, if any."""

    def __init__(self, message: str, traceback: str | None = None) -> None:
        super().__init__(message)
        self.traceback = traceback

    def full_message(self) -> str:
        if not self.traceback:
            return str(self)
        return f"{self}\n  " + self.traceback.rstrip().replace("\n", "\n  ")
