"""Every cause the interventions can check is named only when a changed copy
memorizes the batch: frozen parameters unfrozen, the lr raised. Each bug runs with a
correct twin, which must pass and must not get the bug's cause."""

from __future__ import annotations

import intervention_models as m
import pytest
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner, unfreeze

from catalog.cases import Case
from catalog.runner import Outcome, run_case

LORA, WAVE, ENCODER = "low-rank adapters", "waveform CNN", "sentence encoder"
FAST = {"lr": 0.03}


def report(outcome: Outcome) -> str:
    return outcome.result.report()


def test_adapters_on_a_frozen_base_at_a_fine_tuning_lr_blame_the_lr():
    slow = run_case(
        Case("adapters-2e-5", LORA, m.adapted_classifier, m.token_batch,
             loss=m.classify, optimizer=m.adam(2e-5))  # fmt: skip
    )
    assert slow.code == "lr-too-low", report(slow)
    text = report(slow)
    assert "unfreeze" not in text
    assert "(checked: at lr" in text and "the batch is memorized in" in text
    assert "the freezing is not why it is not memorized" in text


def test_adapters_at_an_adapter_lr_pass():
    twin = run_case(
        Case("adapters-1e-3", LORA, m.adapted_classifier, m.token_batch,
             loss=m.classify, optimizer=m.adam(1e-3))  # fmt: skip
    )
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []  # interventions run only on failure


def test_a_frozen_encoder_is_named_when_unfreezing_it_memorizes():
    frozen = run_case(
        Case("wave-frozen", WAVE, m.encoder_frozen_by_mistake, m.waveforms,
             loss=m.classify, options=FAST)  # fmt: skip
    )
    assert frozen.code == "no-gradient", report(frozen)
    assert (
        "(checked: with the frozen parameters trainable the batch is memorized in"
        in report(frozen)
    )
    twin = run_case(
        Case("wave", WAVE, m.WaveformClassifier, m.waveforms, loss=m.classify,
             options=FAST)  # fmt: skip
    )
    assert twin.code == "memorized", report(twin)


def test_a_frozen_encoder_that_unfreezing_helps_but_does_not_cure_is_checked_in_part():
    """Unfreezing gets the copy much closer, and contradictory labels then floor it:
    the frozen encoder is a real cause, named with what its copy showed."""
    both = run_case(
        Case("wave-frozen-twice", WAVE, m.encoder_frozen_by_mistake,
             m.waveforms_labelled_twice, loss=m.classify, options=FAST)  # fmt: skip
    )
    assert both.code == "no-gradient", report(both)
    text = report(both)
    assert "(checked in part: with the frozen parameters trainable" in text
    assert "then levelling off above the target" in text
    assert "refuted" not in text


def test_a_cut_in_forward_is_named_as_not_checked():
    cut = run_case(
        Case("wave-detached", WAVE, m.WaveformClassifierDetached, m.waveforms,
             loss=m.classify, options=FAST)  # fmt: skip
    )
    assert cut.code == "no-gradient", report(cut)
    assert "(not checked: the cut is in forward's code" in report(cut)


@pytest.mark.parametrize(
    ("batch", "floors"),
    [(m.pairs_with_a_duplicate_positive, True), (m.sentence_pairs, False)],
)
def test_a_pooler_forward_never_calls_is_reported_not_blamed(batch, floors):
    outcome = run_case(
        Case("encoder", ENCODER, m.SentenceEncoder, batch,
             loss=m.in_batch_contrastive)  # fmt: skip
    )
    assert outcome.code == ("not-learning" if floors else "memorized"), report(outcome)
    if floors:
        assert (
            "in modules never called by forward, not blamed for this failure:"
            " pooler.weight, pooler.bias" in report(outcome)
        )


def test_an_intervention_past_the_budget_does_not_run():
    trained = []
    run = GateRun(
        GateSettings(name="default", model="m:m", batch="b:b"),
        Evidence(lr=0.01, target=0.07, losses=[1.4, 1.3, 1.3]),
        m.encoder_frozen_by_mistake,
        m.waveforms,
        m.classify,
        lambda model, lr: None,
        trainer=lambda *args, **options: trained.append(options) or Evidence(),
    )
    run.memo["intervention-seconds"] = runner.BUDGET_SECONDS
    outcome = unfreeze.check(run, ["encoder.0.weight"])
    assert trained == []
    assert not outcome.confirms and not outcome.refutes
    assert "budget for interventions is spent" in outcome.result()


@pytest.mark.parametrize(
    ("model", "code"),
    [(m.ForecasterBuildingItsHead, "unregistered-parameters"),
     (m.Forecaster, "memorized")],
)  # fmt: skip
def test_a_layer_built_in_forward_is_named_when_building_it_once_memorizes(model, code):
    outcome = run_case(
        Case("forecaster", "GRU forecaster", model, m.series,
             loss=m.squared_error)  # fmt: skip
    )
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        text = report(outcome)
        assert "forward builds a new Linear at every call" in text
        assert (
            "intervention_models.py:" in text and "nn.Linear(WIDTH, HORIZON)(h)" in text
        )
        assert (
            "(checked: with the module forward builds made once and registered" in text
        )


@pytest.mark.parametrize(
    ("batch", "code"),
    [(m.shifted_melodies, "shape-error"), (m.shifted_melodies_copied, "memorized")],
)
def test_a_strided_target_that_view_refuses_is_made_contiguous(batch, code):
    outcome = run_case(Case("notes", "note GRU", m.NoteModel, batch, loss=m.next_note))
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        suggestions = outcome.result.diagnosis.suggestions
        assert suggestions == ["batch[1].contiguous()  (checked: the step runs)"]
        assert "strided view" in outcome.result.diagnosis.summary
        assert ".float()" not in report(outcome) and "one_hot" not in report(outcome)


@pytest.mark.parametrize(
    ("batch", "code"),
    [(m.channels_last_noised, "shape-error"), (m.channels_first_noised, "memorized")],
)
def test_two_fields_in_the_same_wrong_layout_are_repaired_together(batch, code):
    outcome = run_case(
        Case("denoiser", "denoiser", m.Denoiser, batch, loss=m.noise_prediction,
             options={"lr": 0.02, "target_ratio": 0.1})  # fmt: skip
    )
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        assert outcome.result.diagnosis.suggestions == [
            'batch["noisy"].permute(0, 3, 1, 2) and batch["noise"].permute(0, 3, 1,'
            " 2)  (checked: the step runs)"
        ]
        assert "timesteps" not in outcome.result.diagnosis.summary


@pytest.mark.parametrize(
    ("batch", "code"),
    [
        (m.cells_with_one_hot_masks, "shape-error"),
        (m.cells_with_class_maps, "memorized"),
    ],
)
def test_one_hot_masks_where_a_class_map_is_taken_are_argmaxed(batch, code):
    outcome = run_case(
        Case("cells", "segmenter", m.CellSegmenter, batch, loss=m.segmentation_loss,
             options={"lr": 0.02})  # fmt: skip
    )
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        assert outcome.result.diagnosis.suggestions == [
            "batch[1].argmax(1, keepdim=True)  (checked: the step runs)"
        ]


@pytest.mark.parametrize(
    ("batch", "code"),
    [(m.padded_with_int64_mask, "data-error"), (m.padded_with_bool_mask, "memorized")],
)
def test_an_int64_attention_mask_is_cast_to_bool(batch, code):
    outcome = run_case(
        Case("padded", "padded encoder", m.PaddedEncoder, batch,
             loss=m.classify_padded, options={"lr": 0.02})  # fmt: skip
    )
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        assert outcome.result.diagnosis.suggestions == [
            'batch["mask"].bool()  (checked: the step runs)'
        ]


@pytest.mark.parametrize(
    ("smoothing", "code"), [(0.3, "not-learning"), (0.0, "memorized")]
)
def test_a_floor_from_label_smoothing_is_named_when_smoothing_off_memorizes(
    smoothing, code
):
    outcome = run_case(
        Case("keywords", "keyword spotter", m.KeywordSpotter, m.utterances,
             loss=m.smoothed(smoothing), options={"lr": 0.01})  # fmt: skip
    )
    assert outcome.code == code, report(outcome)
    if code != "memorized":
        assert outcome.result.diagnosis.summary.startswith(
            "label smoothing 0.3 keeps the loss above the target"
        )
        assert "(checked: with label smoothing off the batch is memorized in" in report(
            outcome
        )
