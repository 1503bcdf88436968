"""Where the torch of a project made by ``mlsmoke new`` comes from, as its next steps
say it.

Online: PyTorch's CPU wheel index. With ``--offline`` no step may need the network, so
the steps name what is here instead: the package sources of the local pip
configuration (``pip config list`` and ``PIP_*`` variables: an index, a mirror, a
directory of wheels), else a torch already installed in the system interpreter (seen
through ``--system-site-packages``), else a directory of wheels the user brings.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
VENV = "python -m venv .venv"
_SOURCE_KEYS = ("index-url", "extra-index-url", "find-links")


@dataclass(frozen=True)
class InstalledTorch:
    version: str
    prefix: str  # the interpreter's sys.prefix


def torch_steps(
    version: str,
    offline: bool,
    pip_sources: Sequence[str],
    installed: InstalledTorch | None,
) -> list[str]:
    """The commands that make .venv and install torch ``version`` in it."""
    activate = f"git init && {VENV} && . .venv/bin/activate"
    pin = f'pip install "torch=={version}"'
    if not offline:
        return [activate, f"{pin} --index-url {CPU_INDEX}"]
    if pip_sources:
        return [
            activate,
            f"{pin}   # from your pip configuration: {', '.join(pip_sources)}",
        ]
    if installed is not None:
        system = f"git init && {VENV} --system-site-packages && . .venv/bin/activate"
        note = f"# torch {installed.version}, already installed in {installed.prefix}"
        if installed.version.split("+")[0] != version:
            note += f" (the project pins {version}: change it in pyproject.toml)"
        return [f"{system}   {note}"]
    return [
        activate,
        f'pip install --no-index --find-links WHEELS "torch=={version}"'
        "   # WHEELS: a directory holding the torch wheel (pip has no source set)",
    ]


def configured_sources(listing: str, environ: Mapping[str, str]) -> list[str]:
    """The keys naming package sources in ``pip config list`` output and the
    environment (their keys only: a URL may carry credentials)."""
    found = []
    for line in listing.splitlines():
        key = line.partition("=")[0].strip()
        if key.rpartition(".")[2] in _SOURCE_KEYS and ":env:" not in key:
            found.append(key)
    for key in _SOURCE_KEYS:
        variable = "PIP_" + key.upper().replace("-", "_")
        if environ.get(variable):
            found.append(variable)
    return found


def local_torch_steps(version: str, offline: bool) -> list[str]:
    """:func:`torch_steps` with this machine's pip configuration and torch."""
    if not offline:
        return torch_steps(version, False, [], None)
    return torch_steps(version, True, _pip_sources(), _system_torch())


def _pip_sources() -> list[str]:
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    return configured_sources(listing, os.environ)


def _system_torch() -> InstalledTorch | None:
    """torch in this interpreter, when it is not a virtual environment's (a new
    environment sees it only through the system site-packages)."""
    if sys.prefix != sys.base_prefix:
        return None
    try:
        return InstalledTorch(importlib.metadata.version("torch"), sys.prefix)
    except importlib.metadata.PackageNotFoundError:
        return None
