"""Install hints from where mlsmoke was installed, and where a new project's torch
comes from: the decisions, with plain values."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.install_hint import install_command
from mlsmoke.torch_source import (
    CPU_INDEX,
    InstalledTorch,
    configured_sources,
    torch_steps,
)


@pytest.mark.parametrize(
    ("direct", "checkout", "command"),
    [
        (None, Path("/src/mlsmoke"), "pip install -e '/src/mlsmoke[template]'"),
        (None, None, "pip install 'mlsmoke[template]'"),  # a package index
        (
            {"url": "file:///src/my%20mlsmoke", "dir_info": {"editable": True}},
            None,
            "pip install -e '/src/my mlsmoke[template]'",
        ),
        (
            {"url": "file:///src/mlsmoke", "dir_info": {}},
            None,
            "pip install '/src/mlsmoke[template]'",
        ),
        (
            {
                "url": "https://github.com/me/m",
                "vcs_info": {
                    "vcs": "git",
                    "commit_id": "abc",
                    "requested_revision": "v0.1.0",
                },
            },
            None,
            "pip install 'mlsmoke[template] @ git+https://github.com/me/m@v0.1.0'",
        ),
        (
            {
                "url": "https://example.org/m.git",
                "vcs_info": {"vcs": "git", "commit_id": "a"},
            },
            None,
            "pip install 'mlsmoke[template] @ git+https://example.org/m.git'",
        ),
        (
            {"url": "file:///w/mlsmoke-0.1-py3-none-any.whl", "archive_info": {}},
            None,
            "pip install 'mlsmoke[template] @ file:///w/mlsmoke-0.1-py3-none-any.whl'",
        ),
    ],
)
def test_the_hint_installs_from_where_mlsmoke_came_from(direct, checkout, command):
    assert install_command(["template"], direct, checkout) == command


def test_several_extras_and_none():
    assert install_command(["init", "template"], None, None) == (
        "pip install 'mlsmoke[init,template]'"
    )
    assert install_command([], None, None) == "pip install mlsmoke"


def test_online_torch_comes_from_pytorchs_cpu_index():
    steps = torch_steps("2.13.0", False, [], None)
    assert steps[-1] == f'pip install "torch==2.13.0" --index-url {CPU_INDEX}'


@pytest.mark.parametrize(
    ("sources", "installed", "says"),
    [
        (["global.index-url"], None, "# from your pip configuration: global.index-url"),
        ([], InstalledTorch("2.13.0+cpu", "/usr"), "--system-site-packages"),
        ([], InstalledTorch("2.12.0", "/usr"), "the project pins 2.13.0"),
        ([], None, "--no-index --find-links WHEELS"),
    ],
)
def test_offline_names_where_torch_comes_from(sources, installed, says):
    text = "\n".join(torch_steps("2.13.0", True, sources, installed))
    assert says in text
    assert "://" not in text


def test_pip_sources_are_named_by_key_never_by_value():
    listing = (
        "global.cert='/etc/ssl/certs/ca.crt'\n"
        "global.index-url='https://user:secret@mirror.example/simple'\n"
        ":env:.find-links='/opt/wheels'\n"
        "site.find-links='/opt/wheels'\n"
    )
    found = configured_sources(listing, {"PIP_FIND_LINKS": "/opt/wheels"})
    assert found == ["global.index-url", "site.find-links", "PIP_FIND_LINKS"]
