"""Evidence before error text, with plain values: what the batch held, which tensors
train, the forward signature, what the loss is made of. No training run."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import bookkeeping, inventory
from mlsmoke.overfit.training.evidence import BatchField, Evidence, ProjectProblem
from mlsmoke.overfit.verdict import batch_probes, diagnoses
from mlsmoke.overfit.verdict.checks import batch_mixing, init_loss
from mlsmoke.overfit.verdict.checks import unregistered_parameters as unregistered
from mlsmoke.overfit.verdict.diagnoses import _batch_keys, _errors
from mlsmoke.overfit.verdict.gate_run import GateRun

from catalog import evidence_cases, models


class EvidenceRun(GateRun):
    """A GateRun on hand-made evidence; a probe would be a test failure."""

    def __init__(
        self, evidence: Evidence, batch=models.classification_batch, loss=None
    ):
        super().__init__(
            GateSettings(name="default", model="m:m", batch="b:b"),
            evidence,
            models.MLPClassifier,
            batch,
            loss,
            lambda model, lr: torch.optim.Adam(model.parameters(), lr=lr or 1e-2),
            trainer=None,
        )

    def probe(self, **overrides: Any) -> Evidence:
        raise AssertionError(f"evidence alone decides; a probe ran: {overrides}")


def tensor_fields(*names: str) -> list[BatchField]:
    return [BatchField(name, "int64 tensor (8, 12)") for name in names]


def raised(error: BaseException) -> BaseException:
    """``error`` with a traceback, as the engine records it."""
    try:
        raise error
    except BaseException as caught:
        return caught


# --- the batch's inventory ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (torch.zeros(3), None),
        ([torch.zeros(2), torch.ones(2)], None),
        ({"a": torch.zeros(2)}, None),
        ("some text", "a str"),
        (None, "None"),
        (["a text", "another, longer text"], "a list of str, not a tensor"),
        ([[1, 2, 3], [4, 5]], "a ragged list (lengths 2..3)"),
        ([[1, 2], [3, 4]], "a list of list, not a tensor"),
        ([torch.zeros(3), torch.zeros(5)], "a ragged list (lengths 3..5)"),
        ({"ids": [1, 2]}, "a dict holding a list of int, not a tensor"),
        (3.5, "a float, not a tensor"),
    ],
)
def test_a_field_that_is_no_tensor_says_what_it_holds(value, problem):
    assert inventory.field_problem(value) == problem


def test_the_inventory_counts_non_finite_values_in_float_fields():
    x = torch.zeros(4, 3)
    x[1, 2], x[2, 0] = float("nan"), float("inf")
    fields = inventory.inventory({"x": x, "ids": torch.arange(4)})
    assert [(f.name, f.nonfinite, f.problem) for f in fields] == [
        ("x", 2, None),
        ("ids", 0, None),
    ]


def test_two_batches_that_differ_only_by_nan_are_the_same_batch():
    a = torch.tensor([1.0, float("nan"), 3.0])
    assert batch_probes.same_tensor(a, a.clone())
    assert not batch_probes.same_tensor(a, torch.tensor([1.0, 2.0, 3.0]))
    assert not batch_probes.same_tensor(a, a.double())


def test_a_batch_holding_nan_is_non_finite_and_not_nondeterministic():
    def batch():
        x, y = models.classification_batch()
        x[0, 0] = float("nan")
        return x, y

    evidence = Evidence(
        lr=0.01,
        losses=[float("nan")],
        batch_fields=inventory.inventory(batch()),
    )
    run = EvidenceRun(evidence, batch=batch, loss=models.cross_entropy)
    assert batch_probes.differing_batch_field(run) is None
    found = diagnoses.diagnose(run)
    assert found.code == "non-finite"
    assert found.summary == "batch field batch[0] holds 1 NaN or Inf values"


# --- data-error from evidence ---------------------------------------------------------


def test_a_batch_factory_that_raises_is_a_data_error_with_its_traceback():
    evidence = Evidence(
        error=raised(ValueError("expected sequence of length 3 at dim 1 (got 2)")),
        phase="batch",
        user_traceback="Traceback (most recent call last):\n  File collate.py ...",
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "data-error"
    assert "the batch factory raised ValueError" in found.evidence[0]
    assert found.evidence[1].startswith("Traceback")
    assert any("pad ragged examples" in s for s in found.suggestions)


@pytest.mark.parametrize(
    "error",
    [
        AttributeError("'list' object has no attribute 'size'"),
        ValueError("You must specify exactly one of input_ids or inputs_embeds"),
        RuntimeError("some message no rule has ever seen"),
    ],
)
def test_a_field_that_is_no_tensor_is_a_data_error_whatever_was_raised(error):
    batch = {"input_ids": ["a text"] * 4, "labels": torch.arange(4)}
    evidence = Evidence(
        error=error,
        phase="forward",
        failed_module="",
        batch_fields=inventory.inventory(batch),
        forward_parameters=["input_ids", "labels"],
    )
    found = diagnoses.diagnose(EvidenceRun(evidence, batch=lambda: batch))
    assert found.code == "data-error"
    assert found.summary.startswith(
        "batch field input_ids holds a list of str, not a tensor"
    )
    assert "batch field input_ids: a list of 4 (a str, ...)  <- here" in found.evidence


@pytest.mark.parametrize(
    ("keys", "parameters", "pairs"),
    [
        (["input_ids", "label"], ["input_ids", "labels"], [("label", "labels")]),
        (["input_id"], ["input_ids", "inputs_embeds"], [("input_id", "input_ids")]),
        (["Labels"], ["labels"], [("Labels", "labels")]),
        (["x", "y"], ["x", "z"], []),  # one-letter names are not typos of each other
        (["labels", "label"], ["labels"], []),  # labels is filled already
        (["pixel_values"], ["input_ids"], []),
    ],
)
def test_keys_one_or_two_edits_from_a_parameter(keys, parameters, pairs):
    assert _batch_keys.close_names(keys, parameters) == pairs


def test_a_misnamed_key_that_loses_the_loss_is_a_data_error_not_a_config_error():
    evidence = Evidence(
        error=ProjectProblem("loss-not-found", "no loss", config_key="loss"),
        phase="loss",
        batch_fields=tensor_fields("input_ids", "label"),
        forward_parameters=["input_ids", "attention_mask", "labels"],
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "data-error"
    assert "batch key 'label'" in found.summary and "'labels'" in found.summary
    assert found.evidence[0] == "the model returned no loss"
    assert found.suggestions[0] == "rename the batch key 'label' to 'labels'"


def test_a_model_that_computes_no_loss_keeps_the_config_hint():
    evidence = Evidence(
        error=ProjectProblem(
            "loss-not-found", "add a loss callable", config_key="loss"
        ),
        phase="loss",
        batch_fields=tensor_fields("x", "y"),
        forward_parameters=["x"],
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "config-error"


# --- shape-error from the words of a size check ---------------------------------------


@pytest.mark.parametrize(
    ("text", "speaks"),
    [
        ("Cannot forward sequence of length 20, block size is only 16", True),
        ("assert idx.size(1) <= self.config.block_size", True),
        ("Make sure that the channel dimension of the pixel values match", True),
        ("Input image size (32*32) doesn't match model (16*16).", True),
        ("expected numChannels == 3", True),
        ("You must specify exactly one of input_ids or inputs_embeds", False),
        ("index out of range in self", False),
        ("expected scalar type Long but found Float", False),
    ],
)
def test_size_checks_are_read_by_their_words(text: str, speaks: bool):
    assert _errors.speaks_of_shapes(text) is speaks


def test_a_bare_assert_on_sizes_inside_a_module_is_a_shape_error():
    # evidence_cases is no test module: pytest leaves its asserts bare
    tokens, targets = evidence_cases.long_token_batch()
    try:
        evidence_cases.BlockSizeLM()(tokens, targets)
    except AssertionError as error:
        caught = error
    assert str(caught) == ""
    evidence = Evidence(
        error=caught,
        phase="forward",
        failed_module="encoder",
        module_inputs={"encoder": [(8, 12)]},
        module_order=["", "encoder"],
        batch_fields=tensor_fields("x"),
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "shape-error"
    assert "inputs of module 'encoder': (8, 12)" in found.evidence


def test_a_library_size_check_in_its_own_words_is_a_shape_error():
    evidence = Evidence(
        error=ValueError(
            "pixel_values carry 3 channels; the model was configured for 1"
        ),
        phase="forward",
        failed_module="embeddings",
        module_inputs={"embeddings": [(8, 3, 12, 12)]},
        batch_fields=tensor_fields("pixel_values"),
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "shape-error"
    assert "inputs of module 'embeddings': (8, 3, 12, 12)" in found.evidence


# --- parameter bookkeeping ------------------------------------------------------------


def plateau() -> list[float]:
    return [1.386 - 0.0001 * i for i in range(40)]


def test_an_optimizer_that_lacks_the_model_parameters_is_named():
    evidence = Evidence(
        lr=0.01,
        target=0.07,
        losses=plateau(),
        requires_grad={"body.0.weight": True, "head.weight": True},
        first_grads={"body.0.weight": 0.2, "head.weight": 0.4},
        optimizer_missing=["body.0.weight", "head.weight"],
        optimizer_extra=["batch field batch[0] (float32 tensor (32, 16))"],
    )
    found = diagnoses.diagnose(EvidenceRun(evidence))
    assert found.code == "optimizer-mismatch"
    assert found.summary.startswith("the optimizer lacks 2 of the model's 2 trainable")
    assert (
        "the optimizer holds instead: batch field batch[0] (float32 tensor (32, 16))"
        in found.evidence
    )


def test_parameters_left_out_that_the_loss_ignores_are_no_mismatch():
    evidence = Evidence(
        lr=0.01,
        target=0.07,
        losses=plateau(),
        requires_grad={"pooler.weight": True, "head.weight": True},
        first_grads={"pooler.weight": None, "head.weight": 0.4},
        optimizer_missing=["pooler.weight"],
    )
    assert diagnoses.optimizer_mismatch.diagnose(EvidenceRun(evidence)) is None


def test_unregistered_leaves_fail_only_where_they_block_memorization():
    leaves = ["layers[0].weight (float32 tensor (2, 16))"]
    stalled = Evidence(lr=0.01, target=0.07, losses=plateau(), unregistered=leaves)
    found = diagnoses.diagnose(EvidenceRun(stalled))
    assert found.code == "unregistered-parameters"
    assert "layers[0].weight" in found.evidence[0]
    memorized = Evidence(lr=0.01, target=0.07, losses=[1.4, 0.05], reached=True)
    memorized.unregistered = leaves
    assert diagnoses.diagnose(EvidenceRun(memorized)).code == "memorized"
    [warning] = unregistered.check(EvidenceRun(memorized))
    assert warning.code == "unregistered-parameters" and leaves[0] in warning.message
    trained_anyway = Evidence(
        lr=0.01, target=0.07, losses=plateau(), unregistered=leaves
    )
    trained_anyway.optimizer_extra = list(leaves)
    assert (
        diagnoses.unregistered_parameters.diagnose(EvidenceRun(trained_anyway)) is None
    )


class ListModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = [nn.Linear(4, 3)]
        self.scale = torch.ones(3, requires_grad=True)
        self.head = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers[0](x) * self.scale)


def test_the_loss_graph_names_the_leaves_the_model_does_not_own():
    model, x = ListModel(), torch.randn(5, 4)
    loss = model(x).sum()
    assert sorted(bookkeeping.unregistered_leaves(loss, model, (x,))) == [
        "layers[0].bias (float32 tensor (3,))",
        "layers[0].weight (float32 tensor (3, 4))",
        "scale (float32 tensor (3,))",
    ]


def test_optimizer_coverage_compares_both_ways():
    model, other, x = ListModel(), nn.Linear(2, 2), torch.randn(5, 4)
    optimizer = torch.optim.SGD([x, *other.parameters()], lr=0.1)
    missing, extra = bookkeeping.optimizer_coverage(model, optimizer, (x,))
    assert missing == ["head.weight", "head.bias"]
    assert extra == [
        "batch field batch[0] (float32 tensor (5, 4))",
        "a float32 tensor (2, 2) the model does not hold",
        "a float32 tensor (2,) the model does not hold",
    ]
    full = torch.optim.SGD(model.parameters(), lr=0.1)
    assert bookkeeping.optimizer_coverage(model, full, (x,)) == ([], [])


# --- checks that assume less ----------------------------------------------------------


def test_init_loss_needs_a_loss_shown_to_be_plain_cross_entropy():
    logits = torch.randn(8, 4) * 10
    targets = torch.arange(8) % 4
    ce = float(F.cross_entropy(logits, targets))
    assert init_loss.is_cross_entropy(ce, logits, targets)
    assert init_loss.is_cross_entropy(-ce, logits, targets)  # a flipped sign
    assert not init_loss.is_cross_entropy(ce + 0.9, logits, targets)  # CE + KL


def test_init_loss_names_the_usual_slips_of_a_cross_entropy():
    logits, targets = torch.randn(8, 4), torch.arange(8) % 4
    raw = float(F.nll_loss(logits, targets))
    probabilities = float(F.nll_loss(logits.softmax(-1), targets))
    assert init_loss.cross_entropy_kind(raw, logits, targets) == (
        "nll_loss on raw logits, log_softmax forgotten"
    )
    assert init_loss.cross_entropy_kind(probabilities, logits, targets).startswith(
        "nll_loss on probabilities"
    )
    ce = float(F.cross_entropy(logits, targets))
    assert init_loss.cross_entropy_kind(-ce, logits, targets) == (
        "cross_entropy on the logits, negated"
    )


def test_init_loss_recognizes_a_causal_lm_shifting_its_labels():
    logits, labels = torch.randn(2, 6, 10), torch.randint(0, 10, (2, 6))
    shifted = F.cross_entropy(logits[:, :-1].reshape(-1, 10), labels[:, 1:].flatten())
    assert init_loss.is_cross_entropy(float(shifted), logits, labels)


def test_perturbation_changes_only_the_chosen_samples_with_valid_values():
    ids = torch.tensor([[5, 7, 9], [7, 7, 5], [9, 5, 5], [-100, 5, 7]])
    changed = batch_mixing.perturbed(ids, 4, [1, 3], torch.Generator().manual_seed(0))
    assert torch.equal(changed[[0, 2]], ids[[0, 2]])
    assert (changed[1] != ids[1]).all()
    assert set(changed[changed >= 0].tolist()) <= {5, 7, 9}
    assert changed[3, 0] == -100  # an ignore index stays what it is
    x = torch.randn(4, 3)
    noisy = batch_mixing.perturbed(x, 4, [2], torch.Generator().manual_seed(0))
    assert torch.equal(noisy[[0, 1, 3]], x[[0, 1, 3]]) and not torch.equal(
        noisy[2], x[2]
    )
    mask = torch.ones(4, 3, dtype=torch.bool)
    assert batch_mixing.perturbed(mask, 4, [1], torch.Generator()) is mask
    assert batch_mixing.perturbed(torch.zeros(5), 4, [1], torch.Generator()).sum() == 0


@pytest.mark.parametrize(
    ("keys", "parameters", "error", "missing"),
    [
        # a seq2seq batch without its targets: the decoder raises about its inputs
        (["input_ids", "attention_mask"], ["input_ids", "attention_mask", "labels"],
         ValueError("You must specify exactly one of input_ids or inputs_embeds"),
         ["labels"]),
        # a collator dropped the text: only the labels are left
        (["labels"], ["input_ids", "inputs_embeds", "labels"],
         ValueError("You must specify exactly one of input_ids or inputs_embeds"),
         ["input_ids", "inputs_embeds"]),
        # a size check is shape-error's to answer
        (["input_ids"], ["input_ids", "labels"],
         ValueError("Cannot forward sequence of length 20, block size is only 16"),
         []),
    ],
)  # fmt: skip
def test_forward_parameters_the_batch_does_not_fill(keys, parameters, error, missing):
    evidence = Evidence(
        error=error,
        phase="forward",
        failed_module="",
        batch_fields=tensor_fields(*keys),
        batch_by_keyword=True,  # a mapping: model(**batch)
        forward_parameters=parameters,
    )
    run = EvidenceRun(evidence)
    assert _batch_keys.missing_inputs(run) == missing
    if missing:
        found = diagnoses.diagnose(run)
        assert found.code == "data-error"
        assert found.evidence[1] == f"the batch's keys: {', '.join(keys)}"
