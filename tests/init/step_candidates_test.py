"""``mlsmoke init`` offers a step function for the gate's ``step`` key, found by reading
the source; a loop inline in a script gets the refactor that makes it one."""

from __future__ import annotations

import textwrap
from pathlib import Path

from adoption import mlsmoke
from gitrepo import commit_all, init_git_repo
from legacy_repo import write_legacy_repo

from mlsmoke.adopt.step_candidates import find, notes, the_one

STEP = """
def train_step(model, batch, optimizer, scheduler=None):
    x, y = batch
    loss = model(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def evaluate(model, batch):  # takes a model and a batch, but does not train
    return model(*batch)


def fit(net, x, y, opt):
    for _ in range(10):
        opt.zero_grad()
        net(x, y).backward()
        opt.step()
"""
# The shape of nanoGPT's train.py: configuration, then the loop at module level.
INLINE = """
import torch
model = build()
optimizer = model.configure_optimizers()
X, Y = get_batch("train")
while True:
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
"""


def write(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return list(files)


def test_step_like_functions_are_found_by_signature_and_body(tmp_path):
    paths = write(tmp_path, {"src/pkg/loop.py": STEP, "tests/test_loop.py": STEP})
    found = find(tmp_path, paths)
    assert [(c.spec, c.takes) for c in found.functions] == [
        ("pkg.loop:train_step", ("model", "batch", "optimizer", "scheduler")),
        ("pkg.loop:fit", ("net", "x", "y", "opt")),
    ]
    assert found.inline == []  # fit's loop is inside a step-like function
    first, _ = notes(found)
    assert 'set step = "pkg.loop:train_step"' in first


UNCALLABLE = """
def train_step_with_loss_fn(model, batch, optimizer, criterion):
    loss = criterion(model(batch[0]), batch[1])
    loss.backward()
    optimizer.step()


def train_step(model, batch, optimizer, *, log_every=10, **options):
    loss = model(*batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss
"""


def test_the_one_step_function_is_the_only_one_the_gate_can_call(tmp_path):
    found = find(tmp_path, write(tmp_path, {"train.py": UNCALLABLE}))
    assert [(c.spec, c.gate_can_call) for c in found.functions] == [
        ("train:train_step_with_loss_fn", False),  # criterion has no default
        ("train:train_step", True),
    ]
    assert the_one(found).spec == "train:train_step"
    two = find(tmp_path, write(tmp_path, {"src/pkg/loop.py": STEP}))
    assert all(c.gate_can_call for c in two.functions)
    assert the_one(two) is None  # train_step and fit: init does not choose


def test_a_loop_inline_in_a_script_gets_the_refactor(tmp_path):
    found = find(tmp_path, write(tmp_path, {"train.py": INLINE}))
    assert found.functions == []
    (loop,) = found.inline
    assert (loop.path, loop.line) == ("train.py", 6)
    assert [line for line, _ in loop.calls] == [12, 15, 16, 18]
    (note,) = notes(found)
    assert note.startswith("the training loop at train.py:6 is inline")
    assert "def train_step(model, batch, optimizer):" in note
    assert "#   train.py:12: scaler.scale(loss).backward()" in note
    assert 'set step = "train:train_step"' in note


def test_init_shows_the_candidate_and_script_mode_for_an_inline_loop(tmp_path):
    repo = write_legacy_repo(init_git_repo(tmp_path / "repo"))
    write(repo, {"src/legacy_pkg/loop.py": STEP})
    commit_all(repo, "legacy")
    ran = mlsmoke(repo, "init", "--dry-run")
    assert ran.returncode == 0, ran.stderr
    assert (
        "note: step candidate: legacy_pkg.loop:train_step(model, batch," in ran.stdout
    )
    (repo / "src/legacy_pkg/loop.py").unlink()
    write(repo, {"train.py": INLINE})
    commit_all(repo, "an inline loop")
    ran = mlsmoke(repo, "init", "--dry-run")
    # A script that trains inline gets script mode: the gate runs its loop as it is,
    # so no refactor into a step function is proposed.
    assert "gate: script mode: train.py" in ran.stdout
    assert "is inline" not in ran.stdout
    assert '+script = "train.py"' in ran.stdout
