"""The ``pip install`` command that adds an extra to this mlsmoke, from where it was
installed: mlsmoke is not on PyPI, so ``pip install 'mlsmoke[template]'`` is right only
for an install from a package index.

- a source tree (an editable install, or the checkout mlsmoke runs from):
  ``pip install -e '<clone>[template]'``;
- a local clone pip copied (``dir_info``, not editable):
  ``pip install '<clone>[template]'``;
- a git URL (``vcs_info``):
  ``pip install 'mlsmoke[template] @ git+<url>@<rev asked>'``;
- an archive (a wheel or sdist, a file or a URL):
  ``pip install 'mlsmoke[template] @ <url>'``;
- a package index (no ``direct_url.json``): ``pip install 'mlsmoke[template]'``.

Every hint that tells a user to install mlsmoke or one of its extras comes from here.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mlsmoke.hook_source import installed_direct_url, running_checkout


def install_command(
    extras: Sequence[str], direct: dict[str, Any] | None, checkout: Path | None
) -> str:
    """The pip command for mlsmoke with ``extras``, installed as ``direct`` (its
    ``direct_url.json``, None from an index) says, or running from ``checkout``."""
    wanted = f"[{','.join(extras)}]" if extras else ""
    if checkout is not None:
        return f"pip install -e {shlex.quote(f'{checkout}{wanted}')}"
    if direct is None:
        return f"pip install {shlex.quote(f'mlsmoke{wanted}')}"
    url = str(direct.get("url", ""))
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict):
        revision = vcs.get("requested_revision")
        at = f"@{revision}" if isinstance(revision, str) and revision else ""
        scheme = str(vcs.get("vcs") or "git")
        location = f"{scheme}+{url.removeprefix(scheme + '+')}{at}"
        return f"pip install {shlex.quote(f'mlsmoke{wanted} @ {location}')}"
    dir_info = direct.get("dir_info")
    local = _local_path(url)
    if isinstance(dir_info, dict) and local is not None:
        editable = "-e " if dir_info.get("editable") else ""
        return f"pip install {editable}{shlex.quote(f'{local}{wanted}')}"
    if url:
        return f"pip install {shlex.quote(f'mlsmoke{wanted} @ {url}')}"
    return f"pip install {shlex.quote(f'mlsmoke{wanted}')}"


def install_hint(*extras: str) -> str:
    """:func:`install_command` for this mlsmoke."""
    return install_command(extras, installed_direct_url(), running_checkout())


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None
