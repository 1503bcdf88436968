"""A library model's own check of its inputs, read from the values it refused: a
speech model's CTC labels past its vocabulary are a label-range-error, whatever
words (``vocab_size``) the check uses. Its twin, labels within the vocabulary,
passes."""

from __future__ import annotations

import pytest
import torch
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

from catalog.cases import Case
from catalog.runner import run_case

pytestmark = pytest.mark.library
VOCAB = 12


def speech_recognizer() -> Wav2Vec2ForCTC:
    torch.manual_seed(0)
    config = Wav2Vec2Config(
        vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, conv_dim=(16, 16), conv_stride=(4, 2),
        conv_kernel=(8, 4), num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2, do_stable_layer_norm=True,
        feat_extract_norm="layer", mask_time_prob=0.0, hidden_dropout=0.0,
        attention_dropout=0.0, activation_dropout=0.0, feat_proj_dropout=0.0,
        layerdrop=0.0, final_dropout=0.0, ctc_loss_reduction="mean", pad_token_id=0,
    )  # fmt: skip
    return Wav2Vec2ForCTC(config)


def transcripts(highest: int):
    def batch() -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(0)
        return {
            "input_values": torch.randn(4, 160, generator=g),
            "labels": torch.randint(1, highest + 1, (4, 6), generator=g),
        }

    return batch


@pytest.mark.parametrize(
    ("highest", "code"), [(2 * VOCAB, "label-range-error"), (VOCAB - 1, "memorized")]
)
def test_ctc_labels_past_the_vocabulary_are_a_label_range_error(highest, code):
    outcome = run_case(Case("ctc", "wav2vec2", speech_recognizer, transcripts(highest)))
    report = outcome.result.report()
    assert outcome.code == code, report
    if code != "memorized":
        assert "labels holds" in report and "outside classes 0..11" in report
        assert "shape" not in outcome.result.diagnosis.summary
