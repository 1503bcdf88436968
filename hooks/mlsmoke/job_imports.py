"""What each caller's jobs import on first use in the warm worker, by name only, so
that the worker can import them while idle. Plain names: ``worker start`` reads them
all without importing any caller.

Every torch.optim optimizer imports ``torch._dynamo`` on its first
``add_param_group`` (torch's lazy ``_disable_dynamo``), at about the cost of
``import torch``, so the jobs that build an optimizer list it.
"""

from __future__ import annotations

GATE_JOB = "mlsmoke.overfit.process.worker"
DOCTEST_JOB = "mlsmoke.doctests.runner"
TORCHFIX_JOB = "mlsmoke.torch_lint.job"
EXPECT_JOB = "mlsmoke.expect.worker"
SUITES_JOB = "mlsmoke.suites.worker"

GATE = ("torch._dynamo", GATE_JOB, "mlsmoke.overfit.gate")
DOCTEST = (DOCTEST_JOB,)
TORCHFIX = (
    "flake8.main.cli",
    "pyflakes.checker",
    "pycodestyle",
    "torchfix.torchfix",
    TORCHFIX_JOB,
)
EXPECT = (EXPECT_JOB,)
SUITES = (SUITES_JOB,)

# What ``worker start`` asks the worker to import: the jobs of a commit's hooks,
# those it runs ahead (``ahead/jobs.py``) among them. torch._dynamo, the costliest by
# far, comes last: a job that arrives during these imports waits for the module being
# imported only, and the lint and data jobs never need it.
_DYNAMO = "torch._dynamo"
COMMIT_HOOKS = (
    *(name for name in GATE if name != _DYNAMO),
    *DOCTEST,
    *TORCHFIX,
    *EXPECT,
    _DYNAMO,
)
