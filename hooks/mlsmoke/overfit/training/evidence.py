"""What one training run observed: the record the training loop writes.

:class:`Evidence` holds observations only, no decisions: the verdict side
(``overfit/verdict/``) turns it into a diagnosis and warnings.

This module does not import torch, so that diagnoses can be tested with plain values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

# Where a run failed; "model" and "optimizer" are factories run before the loop.
PHASES = (
    "model",
    "batch",
    "optimizer",
    "forward",
    "loss",
    "backward",
    "step",
    "scheduler",
)

# Kinds of CUDA failure (Evidence.cuda_error).
DEVICE_ASSERT = "device-side-assert"
ILLEGAL_MEMORY_ACCESS = "illegal-memory-access"
OUT_OF_MEMORY = "out-of-memory"


@dataclass
class BatchField:
    """One field of the batch as the engine received it, in plain values.

    ``problem`` says why it is no tensor a model can take ("a str", "a ragged list",
    "None", ...), or is None for a tensor (or a container of tensors);
    ``nonfinite`` counts the NaN and Inf in a float tensor.
    """

    name: str
    holds: str  # what a user reads, e.g. "int64 tensor (32, 12), values 0..63"
    problem: str | None = None
    nonfinite: int = 0


# The step function's invariants (StepFinding.code), failures first.
STEP_NO_BACKWARD = "step-no-backward"
STEP_NO_GRADIENT = "step-no-gradient"
STEP_GRADIENTS_ACCUMULATE = "step-gradients-accumulate"
STEP_UNDIVIDED_ACCUMULATION = "step-undivided-accumulation"
STEP_PARAMETERS_UNCHANGED = "step-parameters-unchanged"
STEP_EVAL_MODE = "step-eval-mode"
STEP_CLIP_AFTER_STEP = "step-clip-after-step"
STEP_UPDATE_BEFORE_BACKWARD = "step-update-before-backward"
STEP_SCHEDULER_ORDER = "step-scheduler-order"  # a warning: the run is still right


@dataclass
class StepFinding:
    """One invariant the project's step function broke (``training/step_watch.py``).

    ``where`` is the step function's line the fix belongs at, as ``file:line: text``,
    when it was found."""

    code: str
    message: str
    where: str | None = None
    fix: str = ""


class ProjectProblem(Exception):
    """A problem mlsmoke found in what the project gave the gate (torch raised nothing).

    ``config_key`` names the ``[tool.mlsmoke.overfit]`` key to fix when the problem is
    configuration (exit 2, verdict ``error``); otherwise the project's code is at fault
    (exit 1, verdict ``fail``). ``code`` is a short machine-readable name.
    """

    def __init__(self, code: str, message: str, config_key: str | None = None):
        super().__init__(message)
        self.code = code
        self.config_key = config_key


@dataclass
class Evidence:
    """Everything one training run observed."""

    device: str = "cpu"
    dtype: str = "float32"
    lr: float = 0.0  # the first param group's lr at step 0, after any lr_scale
    max_steps: int = 0
    target: float | None = None  # absolute loss to reach (target-loss / target-ratio)
    losses: list[float] = field(default_factory=list)  # before each step's update
    grad_norms: list[float] = field(default_factory=list)  # total norm at each step
    reached: bool = False
    timed_out: bool = False
    seconds: float = 0.0
    error: BaseException | None = None
    phase: str | None = None  # one of PHASES
    user_traceback: str | None = None  # mlsmoke's own frames removed
    # The working directory when it raised: where a relative path was looked for.
    working_directory: str | None = None
    module_inputs: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    module_order: list[str] = field(default_factory=list)  # "" is the model itself
    # per module, the forward arguments it was called with as None
    module_none_arguments: dict[str, list[str]] = field(default_factory=dict)
    first_grads: dict[str, float | None] = field(default_factory=dict)
    requires_grad: dict[str, bool] = field(default_factory=dict)
    # A tied parameter's other names (lm_head.weight for transformer.wte.weight).
    parameter_aliases: dict[str, list[str]] = field(default_factory=dict)
    first_nonfinite_output: str | None = None
    first_nonfinite_grad: str | None = None
    # Beyond the first contract, all optional:
    failed_module: str | None = None  # innermost module whose forward raised
    cuda_error: str | None = (
        None  # DEVICE_ASSERT | ILLEGAL_MEMORY_ACCESS | OUT_OF_MEMORY
    )
    memory: dict[str, int] = field(default_factory=dict)  # bytes, on out-of-memory
    batch_size: int | None = None  # first dimension of the batch's first tensor
    rerun_of: Evidence | None = None  # the CUDA run this CPU re-run replaces
    # Bookkeeping, recorded as the engine builds things (training/inventory.py):
    batch_fields: list[BatchField] = field(default_factory=list)
    batch_by_keyword: bool = False  # a mapping: the model is called as model(**batch)
    # What the gate could not do to the batch, and why, one line per object type: an
    # object that stayed where the factory put it (off the CPU), and one whose floats
    # kept their dtype in a run of another dtype (float64).
    batch_not_moved: list[str] = field(default_factory=list)
    batch_not_cast: list[str] = field(default_factory=list)
    forward_parameters: list[str] | None = None  # model.forward's named parameters
    one_cpu_thread: bool = False  # trained on one thread (training/device.py)
    optimizer_missing: list[str] = field(default_factory=list)  # model params it lacks
    optimizer_extra: list[str] = field(default_factory=list)  # tensors not the model's
    unregistered: list[str] = field(default_factory=list)  # leaves the model lacks
    # The recipe (training/recipe.py): what trained, at which lr, step by step.
    optimizer: str = ""  # the optimizer's class name
    optimizer_source: str = ""  # "built-in Adam", "mypkg.train:make_optimizer", ...
    scheduler: str | None = None  # the scheduler's class name
    lr_scale: float = 1.0  # a probe's factor on every lr of the recipe
    lrs: list[float] = field(default_factory=list)  # lr used at each update
    weight_decay: float = 0.0  # the largest of the param groups
    # What the first forward and loss warned (first lines), e.g. a loss broadcasting
    # its target against the output.
    forward_warnings: list[str] = field(default_factory=list)
    # Dropout modules that ran in training mode at the first step: name -> p.
    dropout: dict[str, float] = field(default_factory=dict)
    unscheduled_lr: float | None = None  # Recipe.configured_lr, with a scheduler
    # The project's step function ("package.module:train_step"), when it trained,
    # and the invariants it broke, in the order found, one per code.
    step_function: str | None = None
    step_findings: list[StepFinding] = field(default_factory=list)
    # The objective drew random numbers outside every module at the first step (a
    # diffusion loss's noise): every step replays those draws (engine.train).
    replayed_draws: bool = False
    # Script mode (training/script_run.py): the script that trained, the batch it was
    # pinned to, and its backward() calls per update.
    script: str | None = None
    pinned: str = ""
    backwards_per_update: int = 1
    # The pinned batch's loss in eval mode, taken when the train-mode loss stopped
    # short (dropout keeps it noisy); it decides whether the batch was memorized.
    eval_loss: float | None = None
    # Trainable parameters that no update had a gradient for (script mode: every
    # update; a factory's run: the first).
    never_got_gradient: list[str] | None = None
    # The step the loss first reached its target.
    reached_at: int | None = None
    # Files of the project a training script wrote while the gate ran it.
    project_writes: list[str] = field(default_factory=list)
    # A library trainer the script trained through, set to the gate's steps, and what
    # it was set to run for (training/script_trainers.py).
    trainer_steps: str | None = None
    # The script ended its training itself, before the gate stopped it.
    script_ended: bool = False
    # The step a loss reached its target below zero; the run trained on from there
    # to show whether the loss is bounded (engine.BOUND_CHECK_STEPS).
    bound_check_from: int | None = None

    @property
    def configured_lr(self) -> float:
        """The lr the project configured: with a scheduler, its base or peak rate
        (a warmup's first step is a fraction of it), else the lr."""
        if self.scheduler and self.unscheduled_lr:
            return self.unscheduled_lr
        return self.lr

    @property
    def steps(self) -> int:
        """Optimizer updates taken (the last loss is measured after the last update)."""
        return max(len(self.losses) - 1, 0)

    @property
    def initial_loss(self) -> float | None:
        return self.losses[0] if self.losses else None

    @property
    def final_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None

    @property
    def memorized(self) -> bool:
        """The loss reached its target and nothing raised."""
        return self.reached and self.error is None

    def stopped_short(self, min_losses: int = 2) -> bool:
        """It trained without an error and stopped short of its target, leaving at
        least ``min_losses`` losses: a curve to read."""
        return (
            self.error is None and not self.reached and len(self.losses) >= min_losses
        )

    @property
    def config_key(self) -> str | None:
        """The config key at fault when the run failed on configuration, else None."""
        return getattr(self.error, "config_key", None)


def error_chain(error: BaseException | None) -> Iterator[BaseException]:
    """``error``, then the error it was raised from or while handling, and so on,
    each once."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__
