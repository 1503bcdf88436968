"""Class ids within the model's outputs, token ids within its vocabulary, a one-hot
target as wide as its outputs: recorded from one forward of the model when the gate
names one, for the fields that reached its loss or its embedding. Labels past the
outputs and a head narrowed below the labels are caught with the model's width named;
other seeds and batch sizes pass, and their false alarms are counted."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import expect_loaders as loaders
import expect_models as models
import pytest

from mlsmoke.expect.api import observe
from mlsmoke.expect.checking import check
from mlsmoke.expect.kinds import MODEL_KINDS
from mlsmoke.expect.record import infer
from mlsmoke.expect.suite_file import Suite

CASES = {
    "images": (loaders.images, models.ImageClassifier),
    "tokens": (loaders.token_windows, models.TinyLM),
    "labels": (loaders.one_hot, models.SoftTargetClassifier),
}


def observed(loader, model=None):
    return observe(loader, None, 4, 0, model)


@pytest.fixture(scope="module")
def suites() -> dict[str, Suite]:
    return {
        name: Suite(Path("expectations.json"), infer(observed(make(), model)), 2.0)
        for name, (make, model) in CASES.items()
    }


def model_expectations(suite: Suite) -> set[tuple[str, str, int]]:
    return {
        (e["kind"], e["field"], e.get("outputs", e.get("vocabulary")))
        for e in suite.expectations
        if e["kind"] in MODEL_KINDS
    }


def test_only_the_fields_that_met_a_width_get_one(suites):
    assert model_expectations(suites["images"]) == {("class_ids", "[1]", 10)}
    assert model_expectations(suites["tokens"]) == {
        ("token_ids", "[0]", 65),
        ("class_ids", "[1]", 65),
    }
    # The label ids never reach the loss: only the one-hot target is bound.
    assert model_expectations(suites["labels"]) == {("target_width", "target", 10)}


def test_a_target_built_inside_the_model_names_no_field():
    suite = infer(
        observed(loaders.token_windows(), lambda: models.TinyLM(shift_inside=True))
    )
    kinds = {(e["kind"], e["field"]) for e in suite if e["kind"] in MODEL_KINDS}
    assert kinds == {("token_ids", "[0]")}


def test_without_a_model_nothing_is_recorded_from_one():
    for make, _ in CASES.values():
        assert not [e for e in infer(observed(make())) if e["kind"] in MODEL_KINDS]


BUGS = [
    # (suite, loader, model, field, kind, mechanism)
    ("images", lambda: loaders.images(one_based=True), models.ImageClassifier,
     "[1]", "class_ids",
     "class ids reach 10, the model has 10 outputs: labels are 1-based"),
    ("images", loaders.images, lambda: models.ImageClassifier(classes=8),
     "[1]", "class_ids",
     "class ids reach 9, the model has 8 outputs: its head narrowed (recorded with"
     " 10)"),
    ("tokens", lambda: loaders.token_windows(vocab=80), models.TinyLM,
     "[0]", "token_ids",
     "the embedding has 65 rows: the tokenizer's vocabulary outgrew the model's"),
    ("tokens", loaders.token_windows, lambda: models.TinyLM(vocab=50),
     "[0]", "token_ids",
     "the embedding has 50 rows: the model's vocabulary shrank (recorded with 65)"),
    ("labels", loaders.one_hot, lambda: models.SoftTargetClassifier(classes=8),
     "target", "target_width",
     "the target has 10 columns, the model has 8 outputs: the model's head changed"),
    ("labels", lambda: loaders.one_hot(num_classes=12), models.SoftTargetClassifier,
     "target", "target_width",
     "the target has 12 columns, the model has 10 outputs: the target's classes"
     " changed"),
]  # fmt: skip


@pytest.mark.parametrize("suite_name,loader,model,field,kind,mechanism", BUGS)
def test_ids_past_the_model_or_a_narrowed_model_are_caught(
    suites, suite_name, loader, model, field, kind, mechanism
):
    failures = check(suites[suite_name], observed(loader(), model))
    caught = [f for f in failures if (f.field, f.kind) == (field, kind)]
    assert caught, [(f.field, f.kind, f.mechanism) for f in failures]
    assert mechanism in caught[0].mechanism, caught[0]
    assert caught[0].batch is not None


def test_without_the_model_the_recorded_width_still_bounds_the_ids(suites):
    failures = check(suites["tokens"], observed(loaders.token_windows(vocab=80)))
    (caught,) = [f for f in failures if f.kind == "token_ids"]
    assert "token ids reach" in caught.mechanism and "65 rows" in caught.mechanism


def test_no_false_alarm_over_seeds_and_batch_sizes(suites):
    alarms: Counter[str] = Counter()
    runs = 0
    for name, (make, model) in CASES.items():
        size = 8 if name == "tokens" else 16
        for seed in range(1, 6):
            for batch in (size, size * 4):
                for failure in check(
                    suites[name], observed(make(seed=seed, batch=batch), model)
                ):
                    if failure.kind in MODEL_KINDS:
                        alarms[f"{name} {failure.field} {failure.kind}"] += 1
                runs += 1
    assert runs == 30
    assert alarms == Counter(), f"{sum(alarms.values())} false alarms in {runs} runs"


def test_a_lightning_module_is_probed_through_its_training_step():
    lightning = pytest.importorskip("lightning")
    import torch.nn.functional as F

    class Module(lightning.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = models.ImageClassifier().head

        def training_step(self, batch, batch_index):
            pixels, labels = batch
            return F.cross_entropy(self.net(pixels.flatten(1)), labels)

    found = infer(observed(loaders.images(), Module))
    bounds = {(e["kind"], e["field"], e.get("outputs")) for e in found}
    assert ("class_ids", "[1]", 10) in bounds
