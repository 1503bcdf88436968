"""The batch's values as evidence, with plain tensors: float class targets, ids past a
lookup table, targets that are all the ignore index, the fields a message names, and
the tensors of the loss's graph that are inputs rather than parameters."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from mlsmoke.overfit.training import bookkeeping
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.objective import check_loss
from mlsmoke.overfit.verdict.diagnoses import _field_values as values


@pytest.mark.parametrize(
    ("name", "tensor", "flagged"),
    [
        ("labels", torch.tensor([0.0, 2.0, 1.0]), True),
        ("start_positions", torch.tensor([3.0, 4.0]), True),
        ("labels", torch.tensor([0, 2, 1]), False),  # int64: right
        ("labels", torch.tensor([0.2, 0.8]), False),  # probabilities: soft targets
        ("pixel_values", torch.tensor([0.0, 255.0]), False),  # not a target
        ("labels", torch.tensor([float("nan"), 1.0]), False),  # non-finite's to name
    ],
)
def test_float_class_targets_are_whole_numbers_in_a_target_field(name, tensor, flagged):
    found = values.float_class_targets([(name, tensor)])
    assert [n for n, _ in found] == ([name] if flagged else [])


def test_ids_past_a_table_prefer_the_field_holding_the_failing_index():
    fields = [
        ("input_ids", torch.tensor([[5, 44, 7]])),  # a few ids past 34
        ("position_ids", torch.tensor([[40, 41, 42]])),  # all of them
        ("labels", torch.tensor([1])),
    ]
    assert values.fields_beyond(fields, 34, index=40) == [
        ("position_ids", 42),
        ("input_ids", 44),
    ]
    assert values.fields_beyond(fields, 100) == []


def test_targets_that_are_all_the_ignore_index_are_found():
    fields = [
        ("labels", torch.full((2, 5), -100)),
        ("input_ids", torch.full((2, 5), -100)),  # not a target
    ]
    assert values.ignored_targets(fields) == [("labels", -100)]
    assert values.ignored_targets([("labels", torch.tensor([-100, 3]))]) == []


def test_fields_named_in_a_message_are_whole_words():
    text = "You must specify exactly one of input_ids or inputs_embeds"
    names = ["input_ids", "inputs_embeds", "ids", "attention_mask"]
    assert values.fields_named_in(text, names) == ["input_ids", "inputs_embeds"]


class MarksItsInputView(nn.Module):
    """As the wav2vec2 family does: a view of the input set to require grad."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, inputs):
        view = inputs[:, None]
        view.requires_grad = True
        return self.linear(view).mean()


def test_a_view_of_a_batch_input_marked_requires_grad_is_no_parameter():
    model, batch = MarksItsInputView(), torch.randn(3, 4)
    loss = model(batch)
    assert bookkeeping.unregistered_leaves(loss, model, batch) == []


def test_a_bare_tensor_the_model_keeps_is_still_unregistered():
    class BareScale(MarksItsInputView):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(1, requires_grad=True)

        def forward(self, inputs):
            return (self.linear(inputs) * self.scale).mean()

    model, batch = BareScale(), torch.randn(3, 4)
    found = bookkeeping.unregistered_leaves(model(batch), model, batch)
    assert found == ["scale (float32 tensor (1,))"]


def test_a_loss_rebuilt_from_a_number_is_no_gradient_not_a_leaf_of_itself():
    rebuilt = torch.tensor(1.5, requires_grad=True)
    with pytest.raises(ProjectProblem, match="rebuilt from a number") as raised:
        check_loss(rebuilt, from_callable=True)
    assert raised.value.code == "loss-no-grad"


def test_a_list_of_per_sample_records_is_an_uncollated_batch():
    samples = [(torch.randn(4), torch.tensor(1)) for _ in range(5)]
    assert values.unstacked_samples(samples) == 5
    assert values.unstacked_samples([{"x": torch.randn(4)} for _ in range(3)]) == 3
    # collated batches: one tensor per field
    assert values.unstacked_samples((torch.randn(5, 4), torch.arange(5))) is None
    assert values.unstacked_samples([torch.randn(5, 4)] * 3) is None
    assert values.unstacked_samples([{"x": 1}, (3, 4), (5, 6)]) is None  # mixed
    assert values.unstacked_samples([(1, 2), (3, 4)]) is None  # two: a pair


def test_sequences_longer_than_a_table_hold_the_failing_position():
    fields = [("input_ids", torch.zeros(2, 24, dtype=torch.long)), ("y", torch.ones(2))]
    assert values.sequences_longer_than(fields, size=16, index=16) == [
        ("input_ids", 24)
    ]
    assert values.sequences_longer_than(fields, size=30, index=30) == []
