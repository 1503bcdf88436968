"""A repository as pip's ``git+`` requirement takes it.

A local path is written ``file://localhost/...``: the pip that ``python -m venv`` brings
(23.x) refuses a ``git+file:///`` URL with no host in a requirement, and with it every
install of the project that lists it, extras included.

Used by :mod:`mlsmoke.hook_source` and loaded by file path by the template's Jinja
extension (``templates/ml-project/mlsmoke_release.py``), which runs where mlsmoke may
not be importable: so it imports nothing of mlsmoke's.
"""

from __future__ import annotations

from pathlib import Path


def git_url(repo: str) -> str:
    """``repo`` for ``git+``: a URL as it is, a local absolute path as a
    ``file://localhost/`` URL (percent-encoded, as ``Path.as_uri`` does)."""
    if not Path(repo).is_absolute():
        return repo
    return "file://localhost" + Path(repo).as_uri()[len("file://") :]
