"""The catalog: correct models that must pass, and real training bugs that must fail
with the right diagnosis code (and warnings that must show).

Each case names its model factory, batch factory, optional loss callable and gate
options, as a project would in ``[tool.mlsmoke.overfit]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.nn import functional as F

from . import bugs, curve_bugs, models, repair_bugs

MEMORIZED = "memorized"


@dataclass(frozen=True)
class Case:
    name: str
    architecture: str
    model: Callable[[], torch.nn.Module]
    batch: Callable[[], Any]
    code: str = MEMORIZED
    loss: Callable[[Any, Any], Any] | None = None
    optimizer: Callable[[Any], Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    warnings: frozenset[str] = frozenset()
    bug: str = ""
    says: str = ""  # a phrase the diagnosis (summary or evidence) must contain

    @property
    def kind(self) -> str:
        if self.code != MEMORIZED:
            return "bug"
        return "warning" if self.warnings else "correct"


def _mse(model: torch.nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.mse_loss(model(x), y)


def regression_batch() -> tuple[torch.Tensor, torch.Tensor]:
    x, _ = models.classification_batch()
    return x, torch.randn(len(x), models.CLASSES, generator=models._generator())


def bert_with_frozen_embeddings() -> models.TinyBertForSequenceClassification:
    model = models.TinyBertForSequenceClassification()
    model.embeddings.weight.requires_grad_(False)  # pretrained and frozen on purpose
    return model


MLP = "MLP"
CNN = "CNN"
GRU = "GRU"
LSTM = "LSTM"
LM = "transformer LM"
HF = "HF-style (**batch)"
LINEAR = "linear regression"

CORRECT = [
    Case("vae", MLP, models.VAE, models.classification_batch, loss=models.vae_loss),
    Case(
        "graph-network",
        MLP,
        models.GraphNetwork,
        models.graph_batch,
        loss=models.graph_loss,
    ),
    Case(
        "gaussian-nll",
        LINEAR,
        models.GaussianRegressor,
        bugs.scalar_regression_batch,
        loss=models.gaussian_nll,
        options={"target_loss": -1.0, "max_steps": 2000},
    ),
    Case(
        "mlp",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        loss=models.cross_entropy,
    ),
    Case("mlp-regression", MLP, models.MLPClassifier, regression_batch, loss=_mse),
    Case(
        "mlp-sgd",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        loss=models.cross_entropy,
        options={"optimizer": "sgd", "lr": 0.1},
    ),
    Case("cnn", CNN, models.CNNClassifier, models.image_batch),
    Case(
        "cnn-batchnorm",
        CNN,
        models.CNNWithBatchNorm,
        models.image_batch,
        loss=models.cross_entropy,
    ),
    Case(
        "gru",
        GRU,
        models.GRUClassifier,
        models.sequence_batch,
        loss=models.cross_entropy,
    ),
    Case("lstm", LSTM, models.LSTMClassifier, models.sequence_batch),
    Case("gpt", LM, models.TinyGPT, models.token_batch),
    Case("bert", HF, models.TinyBertForSequenceClassification, models.text_batch),
    Case(
        "bert-frozen-embeddings",
        HF,
        bert_with_frozen_embeddings,
        models.text_batch,
        options={"frozen": ["embeddings.*"]},  # declared: frozen-parameters stays quiet
    ),
    Case(
        "mlp-gaussian-nll-with-target-loss",
        MLP,
        curve_bugs.GaussianRegressor,
        curve_bugs.regression_batch,
        loss=curve_bugs.gaussian_nll,
        options={"target-loss": -1.0},
        bug="(correct: a learned variance, the loss rightly goes below 0)",
    ),
]

BUGS = [
    Case(
        "vae-kl-sign",
        MLP,
        models.VAE,
        models.classification_batch,
        "wrong-objective",
        loss=bugs.vae_kl_flipped,
        says="falls below zero without bound",
        bug="a VAE's KL term with its sign flipped: it passes its target, then falls"
        " without bound",
    ),
    Case(
        "mlp-bce-on-logits",
        MLP,
        models.MLPClassifier,
        bugs.multi_label_batch,
        "wrong-objective",
        loss=bugs.bce_on_logits,
        says="takes probabilities in [0, 1]",
        bug="binary_cross_entropy on raw logits (sigmoid forgotten)",
    ),
    Case(
        "mlp-loss-not-reduced",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "shape-error",
        loss=bugs.unreduced_cross_entropy,
        says="the loss is not a scalar",
        bug="cross_entropy(reduction='none') returned as the loss",
    ),
    Case(
        "mlp-mse-broadcast",
        LINEAR,
        bugs.one_output_regression,
        bugs.scalar_regression_batch,
        "shape-error",
        loss=bugs.broadcast_mse,
        says="broadcasting",
        bug="a (B, 1) output against a (B,) target: MSE over (B, B) pairs",
    ),
    # make it run
    Case(
        "mlp-labels-beyond-logits",
        MLP,
        models.MLPClassifier,
        bugs.labels_beyond_logits,
        "label-range-error",
        loss=models.cross_entropy,
        bug="labels 0..4 for a model with 4 outputs",
    ),
    Case(
        "bert-num-labels",
        HF,
        lambda: models.TinyBertForSequenceClassification(num_labels=2),
        bugs.text_batch_three_labels,
        "label-range-error",
        says="(2 outputs)",
        bug="num_labels=2 for labels 0..2",
    ),
    Case(
        "bert-input-ids-as-lists",
        HF,
        models.TinyBertForSequenceClassification,
        bugs.text_batch_of_lists,
        "data-error",
        says="batch field input_ids: a list of 32 (a list of 12, ...)  <- here",
        bug="input_ids left as Python lists",
    ),
    Case(
        "bert-misnamed-labels",
        HF,
        models.TinyBertForSequenceClassification,
        bugs.text_batch_misnamed_labels,
        "data-error",
        says="batch field label: int64 tensor (32,), values 0..3  <- here",
        bug="batch key 'label' for forward(labels=...)",
    ),
    Case(
        "gpt-float-token-ids",
        LM,
        models.TinyGPT,
        bugs.float_token_batch,
        "data-error",
        says="batch field batch[0]: float32 tensor (8, 16)  <- here",
        bug="token ids as float",
    ),
    Case(
        "mlp-float-class-targets",
        MLP,
        models.MLPClassifier,
        bugs.float_class_targets,
        "data-error",
        loss=models.cross_entropy,
        bug="class indices as float for cross_entropy",
    ),
    Case(
        "cnn-wrong-flatten-size",
        CNN,
        bugs.cnn_with_wrong_flatten_size,
        models.image_batch,
        "shape-error",
        says="inputs of module 'head': (32, 144)",
        bug="head's in_features computed for another resolution",
    ),
    Case(
        "gru-wrong-head-size",
        GRU,
        bugs.gru_with_wrong_head,
        models.sequence_batch,
        "shape-error",
        loss=models.cross_entropy,
        bug="head sized for a bidirectional GRU",
    ),
    Case(
        "mlp-column-targets",
        MLP,
        models.MLPClassifier,
        bugs.column_targets,
        "shape-error",
        loss=models.cross_entropy,
        bug="targets shaped (B, 1)",
    ),
    Case(
        "mlp-huge-allocation",
        MLP,
        bugs.MLPAllocatingPairwise,
        models.classification_batch,
        "out-of-memory",
        loss=models.cross_entropy,
        bug="a tensor sized by a constant, not the batch",
    ),
    # numerics
    Case(
        "mlp-log-of-relu",
        MLP,
        bugs.MLPWithLogOfRelu,
        models.classification_batch,
        "non-finite",
        says="a logic error, not precision",
        loss=bugs.nll_of_log_relu,
        bug="log of ReLU outputs (log 0)",
    ),
    Case(
        "mlp-naive-softmax",
        MLP,
        bugs.MLPWithNaiveSoftmax,
        models.classification_batch,
        "non-finite",
        says="a precision problem",
        loss=bugs.nll_of_probabilities,
        bug="hand-written softmax overflows float32",
    ),
    Case(
        "gpt-inverted-causal-mask",
        LM,
        bugs.gpt_with_inverted_mask,
        models.token_batch,
        "non-finite",
        says="first appears in module 'blocks.0.attn', from finite inputs",
        bug="causal mask inverted: a row with every position masked",
    ),
    # gradients that do not flow
    Case(
        "mlp-frozen-body",
        MLP,
        bugs.mlp_with_frozen_body,
        models.classification_batch,
        "no-gradient",
        says="frozen (requires_grad=False): body.0.weight",
        loss=models.cross_entropy,
        bug="every layer frozen but the head's bias",
    ),
    Case(
        "cnn-detached-features",
        CNN,
        bugs.CNNWithDetachedFeatures,
        models.image_batch,
        "no-gradient",
        says="cut from the loss (.detach(), .data or torch.no_grad()): features.0",
        bug=".detach() on the conv features",
    ),
    Case(
        "gru-no-grad-in-forward",
        GRU,
        bugs.GRUUnderNoGrad,
        models.sequence_batch,
        "no-gradient",
        loss=models.cross_entropy,
        bug="torch.no_grad() around the GRU",
    ),
    Case(
        "lstm-output-through-data",
        LSTM,
        bugs.LSTMThroughData,
        models.sequence_batch,
        "no-gradient",
        says="no_grad()): rnn.weight_ih_l0, rnn.weight_hh_l0",
        bug="the LSTM's output read through .data",
    ),
    Case(
        "mlp-loss-through-item",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "no-gradient",
        loss=bugs.loss_through_item,
        bug="the loss rebuilt from .item()",
    ),
    Case(
        "gpt-blocks-never-called",
        LM,
        bugs.GPTSkippingBlocks,
        models.token_batch,
        "no-gradient",
        says="in modules never called by forward: blocks.0",
        bug="transformer blocks never called",
    ),
    # learning rate and objective
    Case(
        "mlp-lr-too-high",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "lr-too-high",
        says="at lr 0.1 it memorized",
        loss=models.cross_entropy,
        options={"lr": 1.0},
        bug="Adam at lr 1.0",
    ),
    Case(
        "cnn-sgd-lr-too-high",
        CNN,
        models.CNNClassifier,
        models.image_batch,
        "lr-too-high",
        options={"optimizer": "sgd", "lr": 10.0},
        bug="SGD at lr 10",
    ),
    Case(
        "gru-lr-too-low",
        GRU,
        models.GRUClassifier,
        models.sequence_batch,
        "lr-too-low",
        loss=models.cross_entropy,
        options={"lr": 1e-5},
        bug="Adam at lr 1e-5",
    ),
    Case(
        "gpt-lr-too-low",
        LM,
        models.TinyGPT,
        models.token_batch,
        "lr-too-low",
        options={"lr": 1e-4},
        bug="Adam at lr 1e-4",
    ),
    Case(
        "bert-flipped-loss-sign",
        HF,
        bugs.BertWithFlippedLoss,
        models.text_batch,
        "wrong-objective",
        warnings=frozenset({"init-loss"}),
        bug="loss = -cross_entropy",
    ),
    Case(
        "mlp-adam-over-the-data",
        MLP,
        models.MLPClassifier,
        bugs.data_batch,
        "optimizer-mismatch",
        loss=models.cross_entropy,
        optimizer=bugs.adam_over_the_data,
        says="the optimizer holds instead: batch field batch[0]",
        bug="the optimizer built over the input tensors",
    ),
    Case(
        "mlp-layers-in-a-list",
        MLP,
        bugs.PlainListMLP,
        bugs.data_batch,
        "unregistered-parameters",
        loss=models.cross_entropy,
        warnings=frozenset({"unregistered-parameters"}),
        says="layers[0].weight",
        bug="hidden layers kept in a Python list",
    ),
    Case(
        "mlp-optimizer-maximizes",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "wrong-objective",
        loss=models.cross_entropy,
        optimizer=bugs.maximizing_adam,
        bug="Adam(maximize=True)",
    ),
    # not learning
    Case(
        "mlp-dead-relus",
        MLP,
        bugs.mlp_with_dead_relus,
        models.classification_batch,
        "not-learning",
        loss=models.cross_entropy,
        bug="first-layer biases at -20: every unit dead",
    ),
    Case(
        "lstm-heavy-label-smoothing",
        LSTM,
        models.LSTMClassifier,
        models.sequence_batch,
        "not-learning",
        loss=bugs.cross_entropy_with_heavy_smoothing,
        bug="label smoothing 0.6 (meant 0.06): the target loss is out of reach",
    ),
    Case(
        "linear-unnormalized-features",
        LINEAR,
        bugs.linear_regressor,
        bugs.unnormalized_regression_batch,
        "too-slow",
        says="needs about",
        loss=bugs.mse,
        options={"optimizer": "sgd", "lr": 0.3},
        bug="input features with scales from 1 to 0.01: ill-conditioned",
    ),
    # objective bounds, the lr range test, floors
    Case(
        "gru-nll-of-logits",
        GRU,
        models.GRUClassifier,
        models.sequence_batch,
        "wrong-objective",
        says="falls below zero without bound",
        loss=curve_bugs.nll_of_logits,
        warnings=frozenset({"init-loss"}),  # nll_loss on raw logits, named
        bug="nll_loss on raw logits (log_softmax forgotten): 0.06 at init",
    ),
    Case(
        "mlp-nll-of-logits-with-target-ratio",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "wrong-objective",
        says="negative at init",
        loss=curve_bugs.nll_of_logits,
        options={"target-ratio": 0.05},
        warnings=frozenset({"init-loss"}),  # nll_loss on raw logits, named
        bug="nll_loss on raw logits, negative at init, explicit target-ratio",
    ),
    Case(
        "mlp-lr-seven-decades-low",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "lr-too-low",
        says="the batch is memorized",
        loss=models.cross_entropy,
        options={"lr": 1e-7},
        bug="Adam at lr 1e-7",
    ),
    Case(
        "gru-project-adamw-three-decades-low",
        GRU,
        models.GRUClassifier,
        models.sequence_batch,
        "lr-too-low",
        says="optimizer AdamW with CosineAnnealingLR",
        loss=models.cross_entropy,
        optimizer=curve_bugs.adamw_typed_three_decades_low,
        bug="the project's AdamW at 3e-6 (meant 3e-3), cosine schedule",
    ),
    Case(
        "mlp-sgd-oscillates",
        MLP,
        curve_bugs.narrow_mlp,
        curve_bugs.unnormalized_batch,
        "lr-too-high",
        says="at lr 0.01 it memorized",
        loss=models.cross_entropy,
        options={"optimizer": "sgd", "lr": 0.1},
        warnings=frozenset({"init-loss"}),
        bug="SGD at lr 0.1 on unnormalized features: jagged, then dead",
    ),
    Case(
        "mlp-lambda-lr-zero",
        MLP,
        models.MLPClassifier,
        models.classification_batch,
        "lr-too-low",
        says="the scheduler LambdaLR sets it to 0",
        loss=models.cross_entropy,
        optimizer=curve_bugs.warmup_that_never_starts,
        bug="LambdaLR returning 0: a warmup that never starts",
    ),
    Case(
        "mlp-double-softmax",
        MLP,
        curve_bugs.MLPWithSoftmaxOutput,
        models.classification_batch,
        "not-learning",
        says="levels off at a floor of 0.74",
        loss=models.cross_entropy,
        bug="softmax in forward, then cross_entropy: probabilities as logits",
    ),
    # determinism
    Case(
        "mlp-noise-ignores-eval",
        MLP,
        bugs.MLPWithNoisyInputs,
        models.classification_batch,
        "nondeterministic-batch",
        loss=models.cross_entropy,
        bug="input noise in forward, also in eval mode",
    ),
    # A repair of one field, tried on a copy, makes the step run (verdict/repairs/).
    Case(
        "policy-one-based-actions",
        MLP,
        models.MLPClassifier,
        repair_bugs.one_based_actions,
        "label-range-error",
        loss=repair_bugs.categorical_policy_loss,
        says="batch[1] - 1 makes forward and loss run",
        bug="actions numbered 1..C into a Categorical's log_prob (support 0..C-1)",
    ),
    Case(
        "policy-float-action-indices",
        MLP,
        models.MLPClassifier,
        repair_bugs.float_action_indices,
        "data-error",
        loss=repair_bugs.chosen_action_loss,
        says="batch[1].long() makes forward and loss run",
        bug="gather given action indices stored as float",
    ),
    Case(
        "tagger-integer-multi-hot",
        MLP,
        models.MLPClassifier,
        repair_bugs.integer_multi_hot,
        "data-error",
        loss=repair_bugs.multi_label_loss,
        says="batch[1].float() makes forward and loss run",
        bug="int64 multi-hot targets for binary_cross_entropy_with_logits",
    ),
    Case(
        "mlp-one-hot-given-to-smoothing",
        MLP,
        models.MLPClassifier,
        repair_bugs.one_hot_labels,
        "shape-error",
        loss=repair_bugs.label_smoothing_loss,
        says="batch[1].argmax(-1) makes forward and loss run",
        bug="one-hot labels given to a loss that builds its own one-hot target",
    ),
    Case(
        "mlp-void-label-255",
        MLP,
        models.MLPClassifier,
        repair_bugs.void_marked_labels,
        "label-range-error",
        loss=models.cross_entropy,
        says="batch[1].masked_fill(batch[1] == 255, -100)",
        bug="void pixels marked 255 where the loss ignores -100",
    ),
    Case(
        "mlp-integer-mask",
        MLP,
        models.MLPClassifier,
        repair_bugs.integer_padding_mask,
        "data-error",
        loss=repair_bugs.masked_loss,
        says="batch[2].bool() makes forward and loss run",
        bug="a 0/1 int64 keep-mask used as a boolean mask",
    ),
    Case(
        "cnn-channels-last",
        CNN,
        models.CNNClassifier,
        repair_bugs.channels_last_images,
        "shape-error",
        says="batch[0].permute(0, 3, 1, 2) makes forward and loss run",
        bug="images (B, H, W, C) from an image library into Conv2d",
    ),
]

WARNINGS = [
    Case(
        "mlp-overconfident-init",
        MLP,
        bugs.mlp_with_overconfident_head,
        models.classification_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"init-loss"}),
        bug="last layer's init scaled by 40",
    ),
    Case(
        "cnn-raw-pixels",
        CNN,
        models.CNNClassifier,
        bugs.raw_pixel_batch,
        warnings=frozenset({"init-loss"}),
        bug="pixels 0..255, never normalized (the model returns only its loss)",
    ),
    Case(
        "mlp-single-class-batch",
        MLP,
        models.MLPClassifier,
        bugs.single_class_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"degenerate-batch"}),
        bug="sorted data: one class per batch",
    ),
    Case(
        "gru-view-for-transpose",
        GRU,
        bugs.GRUWithViewForTranspose,
        models.sequence_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"batch-mixing"}),
        bug="view(T, B, F) where transpose(0, 1) was meant",
    ),
    Case(
        "gru-without-batch-first",
        GRU,
        bugs.GRUWithoutBatchFirst,
        models.sequence_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"batch-mixing"}),
        bug="batch_first forgotten: sample 0 is clean, the others mix",
    ),
    Case(
        "mlp-dropout",
        MLP,
        bugs.mlp_with_dropout,
        models.classification_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"dropout-active"}),
        bug="dropout 0.1 on while memorizing",
    ),
    Case(
        "mlp-first-layer-frozen",
        MLP,
        bugs.mlp_with_first_layer_frozen,
        models.classification_batch,
        loss=models.cross_entropy,
        warnings=frozenset({"frozen-parameters"}),
        bug="the first layer frozen; the layers after it memorize without it",
    ),
]

CASES = CORRECT + BUGS + WARNINGS
