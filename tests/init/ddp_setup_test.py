"""init offers overfit-batch-ddp to a project with distributed code, once the gate
passed on 2 ranks; the hook is wired only then, into mlsmoke's repo and ``ci: skip``."""

from __future__ import annotations

import subprocess
import textwrap

import pytest
import yaml
from adoption import adopt
from legacy_repo import write_legacy_repo

from mlsmoke.adopt import ddp_setup, expectations_setup, wiring
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import standard_repos

DDP_DATA = textwrap.dedent('''
    """A loader each rank reads its own shard from, under torch.distributed."""
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


    def sharded_loader():
        generator = torch.Generator().manual_seed(0)
        inputs = torch.randn(32, 4, generator=generator)
        dataset = TensorDataset(inputs, torch.arange(32) % 3)
        sampler = DistributedSampler(dataset) if dist.is_initialized() else None
        shuffle = sampler is None
        return DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=shuffle)
''')  # fmt: skip


def mlsmoke_hooks(text: str) -> list[str]:
    config = yaml.safe_load(text)
    return [
        [hook["id"] for hook in repo["hooks"]]
        for repo in config["repos"]
        if any(hook["id"] == "doctest" for hook in repo["hooks"])
    ][0]


def test_the_hook_is_wired_only_when_turned_on():
    repos = standard_repos()
    text = wiring.wire("", "c.yaml", repos, wiring.gate_comment(Candidates()))
    assert "overfit-batch-ddp" not in wiring.hook_ids(text, "c.yaml")
    text = wiring.turn_gate_on(text, "c.yaml", repos)
    text = expectations_setup.turn_on(text, "c.yaml", repos)
    assert "overfit-batch-ddp" not in wiring.hook_ids(text, "c.yaml")

    on = ddp_setup.turn_on(text, "c.yaml", repos)
    assert mlsmoke_hooks(on)[-2:] == ["data-expectations", "overfit-batch-ddp"]
    assert yaml.safe_load(on)["ci"]["skip"][-2:] == [
        "data-expectations",
        "overfit-batch-ddp",
    ]
    assert ddp_setup.turn_on(on, "c.yaml", repos) == on  # idempotent


@pytest.mark.parametrize(
    ("source", "distributed"),
    [
        ("from torch.nn.parallel import DistributedDataParallel\n", True),
        ("import torch.distributed as dist\n", True),
        ("sampler = DistributedSampler(dataset)\n", True),
        ("import torch\nmodel = torch.nn.Linear(2, 2)\n", False),
        ("# distributed training some day\n", False),
    ],
)
def test_distributed_code_is_found_in_the_tracked_python_files(
    tmp_path, source, distributed
):
    (tmp_path / "train.py").write_text(source)
    (tmp_path / "notes.md").write_text("torch.distributed is not code here\n")
    subprocess.run(["git", "init", "--quiet", tmp_path], check=True)
    subprocess.run(["git", "-C", tmp_path, "add", "."], check=True)
    assert ddp_setup.uses_distributed(tmp_path) is distributed


@pytest.mark.e2e
def test_a_project_with_a_distributed_sampler_gets_the_hook(tmp_path, hook_repo):
    repo = write_legacy_repo(tmp_path / "repo")
    (repo / "src" / "legacy_pkg" / "ddp_data.py").write_text(DDP_DATA)
    adopted = adopt(
        repo,
        hook_repo,
        "--model",
        "legacy_pkg.model:build_model",
        "--batch",
        "legacy_pkg.ddp_data:sharded_loader",
    )
    assert "Running the gate once on 2 ranks" in adopted.init_output
    assert "overfit-batch-ddp is on before each push" in adopted.init_output
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "overfit-batch-ddp" in mlsmoke_hooks(config)
    assert "overfit-batch-ddp" in yaml.safe_load(config)["ci"]["skip"]
