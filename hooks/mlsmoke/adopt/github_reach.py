"""Whether pre-commit could clone its hook repositories from GitHub here.

One ``git ls-remote`` of a hook repository, as pre-commit's own clone would go (git's
proxy settings included), with a short timeout: ``init`` runs it only when the config
it leaves names a GitHub repo, and says that ``--offline`` exists when it fails.
"""

from __future__ import annotations

import os
import subprocess

PROBE_URL = "https://github.com/pre-commit/pre-commit-hooks"
TIMEOUT = 5.0


def why_unreachable(url: str = PROBE_URL, timeout: float = TIMEOUT) -> str | None:
    """None when git reaches ``url``; else git's own reason, in one line."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        ran = subprocess.run(
            ["git", "ls-remote", "--exit-code", url, "HEAD"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"no answer from {url} within {timeout:.0f} s"
    except OSError as error:
        return f"git did not run: {error.strerror}"
    if ran.returncode == 0:
        return None
    return first_reason(ran.stderr) or f"git ls-remote {url} exited {ran.returncode}"


def first_reason(stderr: str) -> str:
    """git's message without its ``fatal:`` prefix: the first non-empty line."""
    for line in stderr.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("fatal:").strip()
    return ""
